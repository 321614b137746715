// DPoP (RFC 9449) on the service's own session API (contract auth.md §12, docs/oauth2.md §10.2 "The service's own
// API"): a sign-in or refresh with a proof binds the session to the proof's key; its access token is then accepted
// only as `DPoP` with a fresh proof by that key, and its refresh token refreshes only with one. Threat throughout: a
// stolen access or refresh token (logs, a compromised proxy, XSS reading storage) used by someone without the key.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { expectUnavailable } from "../faults/support";
import {
  decodeJwt,
  expectError,
  NO_VERIFICATION,
  PASSWORD,
  PREFIX,
  SERVER,
  service,
  signUp,
  uniqueEmail,
  type WireSession,
} from "../helpers";
import { type ProofKey, proof, proofKey } from "../oauth2/dpop-support";
import { STORAGE, uploadForm } from "../storage/helpers";
import { failingNamespace } from "../support/faults";
import { userD1 } from "../support/shards";

const svc = service(NO_VERIFICATION);
const url = (path: string) => `${SERVER}${PREFIX}${path}`;

/** Signs up with a DPoP proof for the sign-up request: the session is bound to `key`. */
async function boundSignUp(key: ProofKey, s = svc): Promise<WireSession> {
  const response = await s.request("POST", "/signup/email-password", {
    json: { email: uniqueEmail("dpop"), password: PASSWORD },
    headers: { dpop: await proof(key, "POST", url("/signup/email-password")) },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { session: WireSession }).session;
}

/** `POST /token` with a proof by `key` (none when null). */
async function refresh(refreshToken: string, key: ProofKey | null, s = svc, dpop?: string) {
  const headers: Record<string, string> = {};
  if (key) headers.dpop = dpop ?? (await proof(key, "POST", url("/token")));
  return s.request("POST", "/token", { json: { refreshToken }, headers });
}

/** `GET /user` with the access token as `DPoP` and a proof by `key` over this request and token. */
async function getUser(accessToken: string, key: ProofKey, dpop?: string) {
  return svc.request("GET", "/user", {
    headers: {
      authorization: `DPoP ${accessToken}`,
      dpop: dpop ?? (await proof(key, "GET", url("/user"), { accessToken })),
    },
  });
}

const jktOf = (accessToken: string) =>
  (decodeJwt(accessToken).payload.cnf as { jkt?: string } | undefined)?.jkt;

describe("sign-in with a DPoP proof", () => {
  it("binds the session: the access token carries cnf.jkt, the session row records the key", async () => {
    const key = await proofKey();
    const session = await boundSignUp(key);
    expect(jktOf(session.accessToken)).toBe(key.jkt);
    const row = await userD1(session.user.id)
      .prepare("SELECT dpop_jkt FROM sessions WHERE id = ?")
      .bind(session.refreshTokenId)
      .first<{ dpop_jkt: string | null }>();
    expect(row?.dpop_jkt).toBe(key.jkt);
  });

  it("without a proof nothing changes: a bearer token without cnf (nhost-js)", async () => {
    const session = await signUp(svc);
    expect(decodeJwt(session.accessToken).payload.cnf).toBeUndefined();
    expect((await svc.get("/user", session.accessToken)).status).toBe(200);
  });

  // Threat: a proof made for another request (another endpoint, method) or a replayed one binding an attacker's
  // session; refused before any session exists.
  it("refuses a proof for another URL or method, a replayed one and a malformed one: 400, no session made", async () => {
    const key = await proofKey();
    const email = uniqueEmail("dpop");
    const signUpWith = (dpop: string) =>
      svc.request("POST", "/signup/email-password", {
        json: { email, password: PASSWORD },
        headers: { dpop },
      });
    await expectError(
      await signUpWith(await proof(key, "POST", url("/signin/email-password"))),
      400,
      "invalid-request",
    );
    await expectError(
      await signUpWith(await proof(key, "GET", url("/signup/email-password"))),
      400,
      "invalid-request",
    );
    await expectError(await signUpWith("not-a-jwt"), 400, "invalid-request");
    // The refused attempts created no account (the proof is checked first): a sign-up with a good proof succeeds.
    const signedUp = await signUpWith(await proof(key, "POST", url("/signup/email-password")));
    expect(signedUp.status).toBe(200);
    const good = await proof(key, "POST", url("/signin/email-password"));
    const signIn = () =>
      svc.request("POST", "/signin/email-password", {
        json: { email, password: PASSWORD },
        headers: { dpop: good },
      });
    const first = await signIn();
    expect(first.status).toBe(200);
    const { session } = (await first.json()) as { session: WireSession };
    expect(jktOf(session.accessToken)).toBe(key.jkt);
    await expectError(await signIn(), 400, "invalid-request");
  });
});

describe("the service's API with a bound access token", () => {
  it("GET /user accepts it as DPoP with a proof; as Bearer it is 401 (a thief has no key)", async () => {
    const key = await proofKey();
    const session = await boundSignUp(key);
    const user = await getUser(session.accessToken, key);
    expect(user.status).toBe(200);
    expect(((await user.json()) as { id: string }).id).toBe(session.user.id);
    await expectError(await svc.get("/user", session.accessToken), 401, "unauthorized");
  });

  // Threat: a stolen token with a proof by the thief's own key, without a proof, or with a proof that covers another
  // token (no ath, or another token's).
  it("refuses DPoP without a proof, with another key's proof, or with a proof whose ath is not this token's", async () => {
    const key = await proofKey();
    const thief = await proofKey();
    const session = await boundSignUp(key);
    const noProof = await svc.request("GET", "/user", {
      headers: { authorization: `DPoP ${session.accessToken}` },
    });
    await expectError(noProof, 401, "unauthorized");
    await expectError(await getUser(session.accessToken, thief), 401, "unauthorized");
    const withoutAth = await proof(key, "GET", url("/user"));
    await expectError(await getUser(session.accessToken, key, withoutAth), 401, "unauthorized");
  });

  // Threat: a proof captured on the wire replayed (§11.1), or one made for another request used here (§4.3).
  it("refuses a replayed proof and a proof for another URL or method", async () => {
    const key = await proofKey();
    const session = await boundSignUp(key);
    const once = await proof(key, "GET", url("/user"), { accessToken: session.accessToken });
    expect((await getUser(session.accessToken, key, once)).status).toBe(200);
    await expectError(await getUser(session.accessToken, key, once), 401, "unauthorized");
    const elsewhere = await proof(key, "GET", url("/mfa/totp/generate"), {
      accessToken: session.accessToken,
    });
    await expectError(await getUser(session.accessToken, key, elsewhere), 401, "unauthorized");
    const otherMethod = await proof(key, "POST", url("/user"), { accessToken: session.accessToken });
    await expectError(await getUser(session.accessToken, key, otherMethod), 401, "unauthorized");
  });

  // Threat: a client downgrading an unbound token to look bound (the DPoP scheme asks for a binding it has not).
  it("refuses an unbound token sent as DPoP", async () => {
    const key = await proofKey();
    const session = await signUp(svc);
    await expectError(await getUser(session.accessToken, key), 401, "unauthorized");
  });

  it("a storage upload and download work as DPoP; the same token as Bearer is no user (thief)", async () => {
    const key = await proofKey();
    const session = await boundSignUp(key);
    const dpopHeaders = async (method: string, target: string) => ({
      authorization: `DPoP ${session.accessToken}`,
      dpop: await proof(key, method, target, { accessToken: session.accessToken }),
    });
    const form = () => uploadForm([{ bytes: "bound bytes", name: "b.txt", type: "text/plain" }]);
    const uploaded = await svc.request("POST", `${STORAGE}/files`, {
      body: form(),
      headers: await dpopHeaders("POST", `${STORAGE}/files`),
    });
    expect(uploaded.status).toBe(201);
    const [file] = ((await uploaded.json()) as { processedFiles: { id: string; uploadedByUserId: string }[] })
      .processedFiles;
    expect(file!.uploadedByUserId).toBe(session.user.id);
    const target = `${STORAGE}/files/${file!.id}`;
    const download = await svc.request("GET", target, { headers: await dpopHeaders("GET", target) });
    expect(download.status).toBe(200);
    expect(await download.text()).toBe("bound bytes");
    // As Bearer the token is invalid: the caller is the public role, which may not upload to the default bucket.
    const asBearer = await svc.request("POST", `${STORAGE}/files`, {
      body: form(),
      token: session.accessToken,
    });
    expect(asBearer.status).toBe(403);
  });

  it("CORS: a preflight asking for the DPoP header gets it allowed for the app's origin", async () => {
    const preflight = await svc.request("OPTIONS", "/user", {
      headers: {
        origin: env.AUTH_CLIENT_URL ?? "http://localhost:3000",
        "access-control-request-method": "GET",
        "access-control-request-headers": "authorization,dpop",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("dpop");
  });
});

describe("refreshing a bound session", () => {
  it("rotates with a proof by the same key; the new access token stays bound", async () => {
    const key = await proofKey();
    const session = await boundSignUp(key);
    const response = await refresh(session.refreshToken, key);
    expect(response.status).toBe(200);
    const next = (await response.json()) as WireSession;
    expect(next.refreshToken).not.toBe(session.refreshToken);
    expect(jktOf(next.accessToken)).toBe(key.jkt);
    expect((await getUser(next.accessToken, key)).status).toBe(200);
  });

  // Threat: a stolen refresh token used without the key, or with the thief's own key. Refused before the token rotates:
  // the holder's next refresh works (and the thief's attempt, not being the holder's, does not end the session).
  it("without a proof or with another key: 401, and the token is not spent", async () => {
    const key = await proofKey();
    const thief = await proofKey();
    const session = await boundSignUp(key);
    await expectError(await refresh(session.refreshToken, null), 401, "invalid-refresh-token");
    await expectError(await refresh(session.refreshToken, thief), 401, "invalid-refresh-token");
    const response = await refresh(session.refreshToken, key);
    expect(response.status).toBe(200);
    expect(jktOf(((await response.json()) as WireSession).accessToken)).toBe(key.jkt);
  });

  // Threat: a proof replayed or made for another request, at the refresh: refused, the token unspent.
  it("a replayed proof or one for another URL: 400 invalid-request, the token unspent", async () => {
    const key = await proofKey();
    const session = await boundSignUp(key);
    const once = await proof(key, "POST", url("/token"));
    const first = await refresh(session.refreshToken, key, svc, once);
    expect(first.status).toBe(200);
    const next = (await first.json()) as WireSession;
    await expectError(await refresh(next.refreshToken, key, svc, once), 400, "invalid-request");
    const elsewhere = await proof(key, "POST", url("/signout"));
    await expectError(await refresh(next.refreshToken, key, svc, elsewhere), 400, "invalid-request");
    expect((await refresh(next.refreshToken, key)).status).toBe(200);
  });

  it("two parallel refreshes with two proofs of the key: both get the same successor (the grace window)", async () => {
    const key = await proofKey();
    const session = await boundSignUp(key);
    const [a, b] = await Promise.all([
      refresh(session.refreshToken, key),
      refresh(session.refreshToken, key),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const [first, second] = (await Promise.all([a.json(), b.json()])) as WireSession[];
    expect(first!.refreshToken).toBe(second!.refreshToken);
    expect(jktOf(first!.accessToken)).toBe(key.jkt);
    expect(jktOf(second!.accessToken)).toBe(key.jkt);
    // A duplicate without the key gets nothing, not even inside the grace window.
    await expectError(await refresh(session.refreshToken, null), 401, "invalid-refresh-token");
  });

  // A session signed in without a proof (an app that adopts DPoP later) is bound by its first refresh with one; from
  // then on it is bound like any other. Threat: a half-bound session (cnf in the access token, bearer refresh).
  it("an unbound session is bound by its first refresh with a proof, refresh token included", async () => {
    const key = await proofKey();
    const session = await signUp(svc);
    const response = await refresh(session.refreshToken, key);
    expect(response.status).toBe(200);
    const next = (await response.json()) as WireSession;
    expect(jktOf(next.accessToken)).toBe(key.jkt);
    await expectError(await refresh(next.refreshToken, null), 401, "invalid-refresh-token");
    const row = await userD1(session.user.id)
      .prepare("SELECT dpop_jkt FROM sessions WHERE id = ?")
      .bind(session.refreshTokenId)
      .first<{ dpop_jkt: string | null }>();
    expect(row?.dpop_jkt).toBe(key.jkt);
    expect((await refresh(next.refreshToken, key)).status).toBe(200);
  });

  it("a replay of an older token with the key still ends the session (RFC 9700 §4.14.2, as for bearer sessions)", async () => {
    const key = await proofKey();
    const session = await boundSignUp(key);
    const s = service({ ...NO_VERIFICATION, AUTH_REFRESH_TOKEN_REUSE_INTERVAL: "0" });
    const next = (await (await refresh(session.refreshToken, key, s)).json()) as WireSession;
    await expectError(await refresh(session.refreshToken, key, s), 401, "invalid-refresh-token");
    await expectError(await refresh(next.refreshToken, key, s), 401, "invalid-refresh-token");
  });
});

describe("faults: SessionFamilies reset after a bound rotation", () => {
  // Threat: the object's answer lost after it rotated (a 503); the client's retry inside the grace window must get the
  // successor still bound (cnf in the access token), and a retry without the key must not.
  it("the retry with the key gets the same, still bound successor; without the key it is refused", async () => {
    const key = await proofKey();
    const session = await boundSignUp(key);
    const { binding, fault } = failingNamespace(env.SESSION_FAMILIES, {
      match: /^rotate$/,
      when: "after",
      times: 1,
    });
    const s = service({ ...NO_VERIFICATION, SESSION_FAMILIES: binding });
    await expectUnavailable(await refresh(session.refreshToken, key, s));
    expect(fault.failures).toBe(1);
    await expectError(await refresh(session.refreshToken, null, s), 401, "invalid-refresh-token");
    const retry = await refresh(session.refreshToken, key, s);
    expect(retry.status).toBe(200);
    const next = (await retry.json()) as WireSession;
    expect(jktOf(next.accessToken)).toBe(key.jkt);
    expect((await refresh(next.refreshToken, key, s)).status).toBe(200);
  });
});
