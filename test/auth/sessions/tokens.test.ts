import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  expectError,
  NO_VERIFICATION,
  PASSWORD,
  service,
  signUp,
  uniqueEmail,
  type WireSession,
} from "../../helpers";
import { allInShards, routedD1, userD1 } from "../../support/shards";

const svc = service(NO_VERIFICATION);
const refresh = (refreshToken: string, s = svc) => s.post("/token", { refreshToken });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The token hashes the session's `SessionFamilies` object holds (its locator is the token's first six hex digits). */
async function familyHashes(refreshToken: string, sessionId: string): Promise<string[]> {
  const stub = env.SESSION_FAMILIES.get(
    env.SESSION_FAMILIES.idFromName(`families:${refreshToken.slice(0, 6)}`),
  );
  return runInDurableObject(stub, (_instance, state) =>
    state.storage.sql
      .exec<{ hash: string }>("SELECT hash FROM tokens WHERE family = ?", sessionId)
      .toArray()
      .map((row) => row.hash),
  );
}

async function refreshed(refreshToken: string, s = svc): Promise<WireSession> {
  const response = await refresh(refreshToken, s);
  expect(response.status).toBe(200);
  return (await response.json()) as WireSession;
}

describe("POST /token", () => {
  it("answers a bare Session with a new refresh token and the same refreshTokenId", async () => {
    const session = await signUp(svc);
    const response = await refresh(session.refreshToken);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const next = (await response.json()) as WireSession;
    expect(Object.keys(next).sort()).toEqual([
      "accessToken",
      "accessTokenExpiresIn",
      "refreshToken",
      "refreshTokenId",
      "user",
    ]);
    expect(next.refreshToken).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(next.refreshToken).not.toBe(session.refreshToken);
    expect(next.refreshTokenId).toBe(session.refreshTokenId);
    expect(next.user.id).toBe(session.user.id);
    expect((await refreshed(next.refreshToken)).refreshTokenId).toBe(session.refreshTokenId);
  });

  it("stores refresh tokens only as SHA-256 hashes", async () => {
    const session = await signUp(svc);
    const hashes = await familyHashes(session.refreshToken, session.refreshTokenId);
    expect(hashes).toHaveLength(1);
    expect(hashes[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(hashes[0]).not.toContain(session.refreshToken.replace(/-/g, ""));
  });

  it("gives 20 parallel refreshes of one token the same successor (grace window)", async () => {
    const session = await signUp(svc);
    const answers = await Promise.all(Array.from({ length: 20 }, () => refresh(session.refreshToken)));
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    const tokens = new Set(
      await Promise.all(answers.map(async (r) => ((await r.json()) as WireSession).refreshToken)),
    );
    expect(tokens.size).toBe(1);
    const [successor] = [...tokens];
    expect(successor).not.toBe(session.refreshToken);
    // The successor works, and the losers' candidate tokens left no trace in the family.
    expect(await familyHashes(session.refreshToken, session.refreshTokenId)).toHaveLength(2);
    await refreshed(successor!);
  });

  // A real wait of 1.1 s past the grace window: ~1.3 s on a quiet machine.
  it("revokes the whole session when a used token is replayed after the grace window", async () => {
    const s = service({ ...NO_VERIFICATION, AUTH_REFRESH_TOKEN_REUSE_INTERVAL: "1" });
    const session = await signUp(s);
    const next = await refreshed(session.refreshToken, s);
    await sleep(1100);
    await expectError(await refresh(session.refreshToken, s), 401, "invalid-refresh-token");
    // The legitimate holder of the newest token is signed out too: the family is gone.
    await expectError(await refresh(next.refreshToken, s), 401, "invalid-refresh-token");
    expect(await allInShards("SELECT id FROM sessions WHERE id = ?", session.refreshTokenId)).toEqual([]);
  }, 10_000);

  it("treats a token two generations old as a replay even inside the window", async () => {
    const session = await signUp(svc);
    const second = await refreshed(session.refreshToken);
    const third = await refreshed(second.refreshToken);
    await expectError(await refresh(session.refreshToken), 401, "invalid-refresh-token");
    await expectError(await refresh(third.refreshToken), 401, "invalid-refresh-token");
  });

  it("answers 401 invalid-refresh-token for unknown, malformed and expired tokens", async () => {
    await expectError(await refresh(crypto.randomUUID()), 401, "invalid-refresh-token");
    await expectError(await refresh("not-a-token"), 401, "invalid-refresh-token");
    const session = await signUp(svc);
    await routedD1(session.refreshTokenId)
      .prepare("UPDATE sessions SET expires_at = 0 WHERE id = ?")
      .bind(session.refreshTokenId)
      .run();
    await expectError(await refresh(session.refreshToken), 401, "invalid-refresh-token");
  });

  it("answers 401 disabled-user when the user was disabled after signing in", async () => {
    const session = await signUp(svc);
    await userD1(session.user.id)
      .prepare("UPDATE users SET disabled = 1 WHERE id = ?")
      .bind(session.user.id)
      .run();
    await expectError(await refresh(session.refreshToken), 401, "disabled-user");
  });

  it("answers 400 invalid-request without a refreshToken", async () => {
    await expectError(await svc.post("/token", {}), 400, "invalid-request");
  });
});

describe("POST /signout", () => {
  it("revokes the session of the given refresh token and answers OK", async () => {
    const session = await signUp(svc);
    const response = await svc.post("/signout", { refreshToken: session.refreshToken });
    expect(await response.json()).toBe("OK");
    await expectError(await refresh(session.refreshToken), 401, "invalid-refresh-token");
  });

  // README "Sessions and sign-out": what sign-out ends (the refresh token at once) and what it cannot (an access token
  // already issued, checked by signature alone, until its exp). A change here must change the README too.
  it("ends the refresh token at once; the access token already issued lives until its exp", async () => {
    const session = await signUp(svc);
    expect(await (await svc.post("/signout", { refreshToken: session.refreshToken })).json()).toBe("OK");
    await expectError(await refresh(session.refreshToken), 401, "invalid-refresh-token");
    expect((await svc.get("/user", session.accessToken)).status).toBe(200);
    const { exp, iat } = JSON.parse(
      atob(session.accessToken.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/")),
    );
    expect(exp - iat).toBe(900);
  });

  it("answers OK for an unknown token, with no body, and with a stale bearer", async () => {
    expect(await (await svc.post("/signout", { refreshToken: crypto.randomUUID() })).json()).toBe("OK");
    expect(
      await (
        await svc.request("POST", "/signout", { headers: { "content-type": "application/json" } })
      ).json(),
    ).toBe("OK");
    expect(await (await svc.post("/signout", {}, "stale.token.value")).json()).toBe("OK");
  });

  it("with all: true revokes every session of the user and leaves other users alone", async () => {
    const email = uniqueEmail();
    const first = await signUp(svc, email);
    const second = (
      (await (await svc.post("/signin/email-password", { email, password: PASSWORD })).json()) as {
        session: WireSession;
      }
    ).session;
    const other = await signUp(svc);
    const response = await svc.post("/signout", { all: true }, second.accessToken);
    expect(await response.json()).toBe("OK");
    await expectError(await refresh(first.refreshToken), 401, "invalid-refresh-token");
    await expectError(await refresh(second.refreshToken), 401, "invalid-refresh-token");
    expect((await refresh(other.refreshToken)).status).toBe(200);
  });

  it("with all: true needs a valid access token", async () => {
    await expectError(await svc.post("/signout", { all: true }), 401, "unauthorized");
    await expectError(await svc.post("/signout", { all: true }, "bad.token.here"), 401, "unauthorized");
  });
});

describe("POST /token/verify", () => {
  it("answers OK for a valid token in the body or in the Authorization header", async () => {
    const session = await signUp(svc);
    expect(await (await svc.post("/token/verify", { token: session.accessToken })).json()).toBe("OK");
    expect(await (await svc.post("/token/verify", undefined, session.accessToken)).json()).toBe("OK");
  });

  it("checks the body token first, and answers 401 unauthorized for an invalid or missing one", async () => {
    const session = await signUp(svc);
    await expectError(
      await svc.post("/token/verify", { token: "x.y.z" }, session.accessToken),
      401,
      "unauthorized",
    );
    await expectError(await svc.post("/token/verify", {}), 401, "unauthorized");
    const tampered = `${session.accessToken.slice(0, -4)}AAAA`;
    await expectError(await svc.post("/token/verify", { token: tampered }), 401, "unauthorized");
  });
});
