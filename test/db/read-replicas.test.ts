// Reads near the user (docs/decisions.md, "Reads near the user"): the session check and the refresh read a nearby
// replica, which may lag the primary. Threats and promises tested against a replica that lags on purpose
// (test/support/replica.ts):
// - a user never sees their own write undone: a change followed at once by the same client's refresh (nhost-js's
//   way to see it) shows the change, and so does `GET /user` when the client sends back the answer's bookmark;
// - a row just written is never missing: sign-up then `GET /user`, sign-in then refresh, at once;
// - a replica's lag never lets a revoked session refresh: sign-out everywhere and a password change end the other
//   sessions at once, though the replica still has their rows.

import { env } from "cloudflare:test";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../src/auth/mfa/totp";
import { expectError, NO_VERIFICATION, PASSWORD, service, uniqueEmail, type WireSession } from "../helpers";
import { laggingReplica } from "../support/replica";
import { landInShard, shardNames, signUpInEachShard, signUpInShard } from "./shard-users";

const SETTINGS = { ...NO_VERIFICATION, AUTH_MFA_ENABLED: "true", AUTH_ANONYMOUS_USERS_ENABLED: "true" };

/**
 * The lagging replica is the home database's (test/support/replica.ts): the users of these tests are made to live
 * there (test/db/shard-users.ts), so every read of theirs meets it.
 */
async function withLaggingReplica() {
  const replica = await laggingReplica();
  return { replica, svc: service({ ...SETTINGS, DB: replica.binding }) };
}

async function activateTotp(svc: ReturnType<typeof service>, session: WireSession): Promise<Response> {
  const generated = await svc.get("/mfa/totp/generate", session.accessToken);
  const { totpSecret } = (await generated.json()) as { totpSecret: string };
  const code = totpCode(decodeBase32IgnorePadding(totpSecret), totpStep(Date.now()));
  const activated = await svc.post("/user/mfa", { code, activeMfaType: "totp" }, session.accessToken);
  expect(activated.status).toBe(200);
  return activated;
}

describe("reads near the user", () => {
  it("serves the session check and the refresh from the replica, with no read of the primary", async () => {
    const { replica, svc } = await withLaggingReplica();
    let session = await signUpInShard(svc, 0);
    await replica.freeze(session.user.id);
    // Warm: the first request of an isolate may read the signing keys from the primary.
    await svc.get("/user", session.accessToken);
    replica.counts.primary = 0;
    replica.counts.replica = 0;
    for (let i = 0; i < 3; i++) {
      expect((await svc.get("/user", session.accessToken)).status).toBe(200);
      const refreshed = await svc.post("/token", { refreshToken: session.refreshToken });
      expect(refreshed.status).toBe(200);
      session = (await refreshed.json()) as WireSession;
    }
    expect(replica.counts).toEqual({ primary: 0, replica: 6 });
  });

  it("shows the user's own change at once to the same client's refresh, and to GET /user given the bookmark", async () => {
    const { replica, svc } = await withLaggingReplica();
    const session = await signUpInShard(svc, 0);
    await replica.freeze(session.user.id);
    const activated = await activateTotp(svc, session);
    const bookmark = activated.headers.get("x-d1-bookmark");
    expect(bookmark).toMatch(/^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/);

    // The refresh token brings the session's family, which holds the bookmark of the change: nothing to send.
    const refreshed = await svc.post("/token", { refreshToken: session.refreshToken });
    expect(((await refreshed.json()) as WireSession).user.activeMfaType).toBe("totp");

    const fresh = await svc.request("GET", "/user", {
      token: session.accessToken,
      headers: { "x-d1-bookmark": bookmark! },
    });
    expect(((await fresh.json()) as { activeMfaType: string | null }).activeMfaType).toBe("totp");

    // Without the bookmark the replica answers, as old as its lag: the documented window (and the proof that the
    // session check reads the replica at all).
    const stale = await svc.get("/user", session.accessToken);
    expect(((await stale.json()) as { activeMfaType: string | null }).activeMfaType).toBeNull();
    // A bookmark that is not one is ignored, not an error.
    const odd = await svc.request("GET", "/user", {
      token: session.accessToken,
      headers: { "x-d1-bookmark": "'; DROP TABLE users; --" },
    });
    expect(odd.status).toBe(200);
  });

  it("answers from the primary when D1 will not take a client's bookmark", async () => {
    // A bookmark of the right shape that D1 never gave (far in the future). Local D1 takes it; a D1 that refuses it
    // (played here by a binding whose session for it fails) must not turn the session check into a 500.
    const future = `ffffffff-ffffffff-ffffffff-${"f".repeat(32)}`;
    // Every shard's binding refuses it: the bookmark is read in the shard of the token's user.
    const refusing = (binding: D1Database) =>
      new Proxy(binding, {
        get(target, property) {
          if (property === "withSession") {
            return (constraint?: string) =>
              constraint === future
                ? {
                    prepare: () => {
                      throw new Error("D1_ERROR: bookmark not valid");
                    },
                  }
                : target.withSession(constraint);
          }
          const value = Reflect.get(target, property);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    const names = shardNames(env);
    const svc = service({
      ...SETTINGS,
      ...Object.fromEntries(names.map((name) => [name, refusing(env[name as "DB"])])),
    });
    for (const session of await signUpInEachShard(svc)) {
      const response = await svc.request("GET", "/user", {
        token: session.accessToken,
        headers: { "x-d1-bookmark": future },
      });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { id: string }).id).toBe(session.user.id);
    }
  });

  it("gives an anonymous user who registers their new claims at the next refresh", async () => {
    const { replica, svc } = await withLaggingReplica();
    const session = await landInShard(0, async () => {
      const signedIn = await svc.post("/signin/anonymous", {});
      return ((await signedIn.json()) as { session: WireSession }).session;
    });
    await replica.freeze(session.user.id);
    const email = uniqueEmail("deanon");
    const registered = await svc.post(
      "/user/deanonymize",
      { signInMethod: "email-password", email, password: PASSWORD },
      session.accessToken,
    );
    expect(registered.status).toBe(200);
    const refreshed = (await (
      await svc.post("/token", { refreshToken: session.refreshToken })
    ).json()) as WireSession;
    expect(refreshed.user.isAnonymous).toBe(false);
    expect(refreshed.user.email).toBe(email);
  });

  it("never misses a row written a moment ago: sign-up then GET /user, sign-in then refresh", async () => {
    const { replica, svc } = await withLaggingReplica();
    // The replica has nothing of this user: it lags behind the sign-up itself.
    const session = await signUpInShard(svc, 0);
    const user = await svc.get("/user", session.accessToken);
    expect(user.status).toBe(200);
    expect(((await user.json()) as { id: string }).id).toBe(session.user.id);
    const refreshed = await svc.post("/token", { refreshToken: session.refreshToken });
    expect(refreshed.status).toBe(200);
    // The replica was asked first; the primary answered what it lacked.
    expect(replica.counts.replica).toBeGreaterThanOrEqual(2);
  });

  it("ends the other sessions at once on sign-out everywhere and on a password change, whatever the replica has", async () => {
    const { replica, svc } = await withLaggingReplica();
    const first = await signUpInShard(svc, 0);
    const email = first.user.email!;
    const signIn = async () =>
      (
        (await (await svc.post("/signin/email-password", { email, password: PASSWORD })).json()) as {
          session: WireSession;
        }
      ).session;
    const second = await signIn();
    const third = await signIn();
    await replica.freeze(first.user.id);

    const changed = await svc.post("/user/password", { newPassword: `${PASSWORD} 2` }, first.accessToken);
    expect(changed.status).toBe(200);
    // The replica still has the second session's row; its family was revoked in its object.
    await expectError(
      await svc.post("/token", { refreshToken: second.refreshToken }),
      401,
      "invalid-refresh-token",
    );
    expect((await svc.post("/token", { refreshToken: first.refreshToken })).status).toBe(200);

    const everywhere = await svc.post(
      "/signout",
      { refreshToken: first.refreshToken, all: true },
      first.accessToken,
    );
    expect(everywhere.status).toBe(200);
    await expectError(
      await svc.post("/token", { refreshToken: third.refreshToken }),
      401,
      "invalid-refresh-token",
    );
  });
});
