// The real @nhost/nhost-js client against the Worker's own fetch handler (Requests and Responses, no socket: the
// configuration differs per test, which one `wrangler dev` could not give), for what issue 23 changed under it:
// - access tokens signed with EdDSA: the client never verifies a token, it decodes it, so any algorithm works;
// - the bookmark a client may carry (docs/decisions.md, "Reads near the user"): a six-line chain function, the one
//   documented for apps, makes `getUser()` after a change read at least as fresh as the change, whatever replica.

import { env } from "cloudflare:test";
import { createClient } from "@nhost/nhost-js";
import type { ChainFunction } from "@nhost/nhost-js/fetch";
import { MemoryStorage } from "@nhost/nhost-js/session";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { decodeProtectedHeader } from "jose";
import { describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../../src/auth/mfa/totp";
import { generatePrivateJwk } from "../../../src/lib/key-algorithms";
import { NO_VERIFICATION, PASSWORD, PREFIX, SERVER, service, uniqueEmail } from "../../helpers";
import { laggingReplica } from "../../support/replica";
import { testShards } from "../../support/shards";

type Service = ReturnType<typeof service>;

/** Every call of the client goes to `svc` instead of the network. */
const toService =
  (svc: Service): ChainFunction =>
  () =>
  (url, init) =>
    svc.request(init?.method ?? "GET", url, {
      headers: Object.fromEntries(new Headers(init?.headers).entries()),
      body: init?.body as BodyInit | undefined,
    });

/** The chain function docs/decisions.md shows: remember the newest bookmark an answer carried, send it back. */
function carryBookmark(): ChainFunction {
  let bookmark: string | null = null;
  return (next) => async (url, init) => {
    const headers = new Headers(init?.headers);
    if (bookmark) headers.set("x-d1-bookmark", bookmark);
    const response = await next(url, { ...init, headers });
    bookmark = response.headers.get("x-d1-bookmark") ?? bookmark;
    return response;
  };
}

function nhostFor(svc: Service, chain: ChainFunction[] = []) {
  return createClient({
    authUrl: `${SERVER}${PREFIX}`,
    storageUrl: `${SERVER}/storage/v1`,
    storage: new MemoryStorage(),
    // After the client's own chain (session refresh, the bearer header): the bookmark, then the Worker.
    configure: [
      ({ auth }) => {
        for (const link of [...chain, toService(svc)]) auth.pushChainFunction(link);
      },
    ],
  });
}

describe("@nhost/nhost-js at the edge", () => {
  it("signs up, refreshes and reads the user with EdDSA access tokens", async () => {
    const ed = { ...(await generatePrivateJwk("EdDSA")), kid: "ed" };
    const rsa = { ...(await generatePrivateJwk("RS256")), kid: "rsa" };
    const svc = service({ ...NO_VERIFICATION, AUTH_JWT_PRIVATE_KEYS: JSON.stringify([ed, rsa]) });
    const nhost = nhostFor(svc);
    const email = uniqueEmail("eddsa");
    const signedUp = await nhost.auth.signUpEmailPassword({ email, password: PASSWORD });
    expect(decodeProtectedHeader(signedUp.body.session!.accessToken)).toMatchObject({
      alg: "EdDSA",
      kid: "ed",
    });
    const refreshed = await nhost.refreshSession(0);
    // Rotated (an Ed25519 signature is deterministic: within the same second the access token may be the same).
    expect(refreshed?.refreshToken).not.toBe(signedUp.body.session!.refreshToken);
    expect(decodeProtectedHeader(refreshed!.accessToken).alg).toBe("EdDSA");
    expect((await nhost.auth.getUser()).body.email).toBe(email);
  });

  it("reads its own change back at once through a lagging replica when it carries the bookmark", async () => {
    // Every shard has a lagging replica: the user's rows are in the shard of its slot, known once it exists.
    const names = String(env.AUTH_D1_SHARDS).split(",");
    const replicas = await Promise.all(names.map((name) => laggingReplica(env[name] as D1Database)));
    const bindings = Object.fromEntries(names.map((name, i) => [name, replicas[i]!.binding]));
    const svc = service({ ...NO_VERIFICATION, AUTH_MFA_ENABLED: "true", ...bindings });
    const nhost = nhostFor(svc, [carryBookmark()]);
    const signedUp = await nhost.auth.signUpEmailPassword({
      email: uniqueEmail("bookmark"),
      password: PASSWORD,
    });
    const userId = signedUp.body.session!.user!.id;
    await replicas[testShards().indexOfUser(userId)]!.freeze(userId);
    const { totpSecret } = (await nhost.auth.changeUserMfa()).body;
    const code = totpCode(decodeBase32IgnorePadding(totpSecret), totpStep(Date.now()));
    await nhost.auth.verifyChangeUserMfa({ code, activeMfaType: "totp" });
    expect((await nhost.auth.getUser()).body.activeMfaType).toBe("totp");
    // Without the bookmark the session check reads the replica, as old as its lag.
    const stale = await fetchUser(svc, nhost.getUserSession()!.accessToken);
    expect(stale.activeMfaType).toBeNull();
    // And nhost-js's own way to see a change, a refresh, shows it without any header.
    expect((await nhost.refreshSession(0))?.user?.activeMfaType).toBe("totp");
  });
});

async function fetchUser(svc: Service, token: string): Promise<{ activeMfaType: string | null }> {
  return (await (await svc.get("/user", token)).json()) as { activeMfaType: string | null };
}
