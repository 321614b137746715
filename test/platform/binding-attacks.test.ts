// The service binding under attack (contract platform.md §1, docs/workers.md; docs/decisions.md "Issue 45: the binding
// under attack"). Every call crosses a real service binding from the consumer Worker (test/fakes/binding-consumer.js).
// Each test names the threats it covers; a refusal is only proved next to an acceptance of the same shape, so it is
// the attack that is refused, not a broken fixture.
import { env } from "cloudflare:test";
import { base64url, decodeJwt, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { goTrueIssuer } from "../../src/faces/supabase/gotrue/tokens";
import { getConfig } from "../../src/runtime/config";
import { getKeySet } from "../../src/signing-keys/keys";
import { accountService, PAGE_STEPS, signedIn } from "../account-center/support";
import {
  NO_VERIFICATION,
  PASSWORD,
  SERVER,
  service,
  signUp,
  uniqueEmail,
  type WireSession,
} from "../helpers";
import { API, authenticateThrough, dpopKey, rpc } from "./support";

const svc = service(NO_VERIFICATION);
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const live = { options: { live: true } };
const config = getConfig(env);

async function signIn(email: string, headers: Record<string, string> = {}): Promise<WireSession> {
  const response = await svc.request("POST", "/signin/email-password", {
    json: { email, password: PASSWORD },
    headers,
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as { session: WireSession }).session;
}

/**
 * A JWT signed by the service's own key (what only the service can make): the attacks below are tokens the service
 * did sign, for another purpose (an OAuth2 access token, an ID token, the other face) or with claims that disagree.
 */
async function signedByService(
  payload: JWTPayload,
  {
    typ = "JWT",
    kid,
    signer = "signer",
  }: { typ?: string; kid?: string; signer?: "signer" | "idTokenSigner" } = {},
): Promise<string> {
  const key = (await getKeySet(config))[signer];
  return new SignJWT(payload).setProtectedHeader({ alg: key.alg, kid: kid ?? key.kid, typ }).sign(key.key);
}

const now = () => Math.floor(Date.now() / 1000);

/** A user who is answered in every attack below, and its session's real claims. */
let email: string;
let first: WireSession;
let claims: JWTPayload;

beforeAll(async () => {
  email = uniqueEmail("attack");
  first = await signUp(svc, email);
  claims = decodeJwt(first.accessToken);
  expect(claims.session_locator).toMatch(/^[0-9a-f]{6}$/);
});

describe("tokens that are not this face's session access token", () => {
  // Threats: a token the service signed for another purpose, or a face's token dressed as the other's, taken as a
  // session; an expired token taken with `live`; `alg: none`, a kid not ours, another key under our kid; an old
  // system's token after a move (accepted read-only on the service's own API, never through the binding).
  it("an OAuth2 at+jwt, an ID token, crossed faces, expired, alg none, a foreign kid or key, an old system's: nobody", async () => {
    const { privateKey: strangerKey } = await generateKeyPair("ES256");
    const resigned = await signedByService({ ...claims }); // the control: the same claims, signed again, pass
    const header = (value: object) => base64url.encode(JSON.stringify(value));
    const payload = base64url.encode(JSON.stringify({ ...claims, exp: now() + 600 }));
    const tokens = [
      // An OAuth2 access token (RFC 9068): its own typ, an audience.
      await signedByService({ ...claims, aud: "client-1", client_id: "client-1" }, { typ: "at+jwt" }),
      await signedByService({ ...claims }, { typ: "at+jwt" }),
      // An OpenID Connect ID token: the ID-token key, an audience (the client).
      await signedByService({ ...claims, aud: "client-1", nonce: "n" }, { signer: "idTokenSigner" }),
      // The Nhost issuer with the Supabase face's audience, and the Supabase issuer without it or without a session.
      await signedByService({ ...claims, aud: "authenticated" }),
      await signedByService({ ...claims, iss: goTrueIssuer(config), session_id: claims.sid }),
      await signedByService({ ...claims, iss: goTrueIssuer(config), aud: "authenticated" }),
      // Expired a second ago.
      await signedByService({ ...claims, iat: now() - 900, exp: now() - 1 }),
      // alg none, with and without our kid.
      `${header({ alg: "none", typ: "JWT", kid: (await getKeySet(config)).signer.kid })}.${payload}.`,
      `${header({ alg: "none", typ: "JWT" })}.${payload}.`,
      // Another key, under a kid not ours and under ours.
      await new SignJWT({ ...claims })
        .setProtectedHeader({ alg: "ES256", kid: "not-ours", typ: "JWT" })
        .sign(strangerKey),
      await new SignJWT({ ...claims })
        .setProtectedHeader({ alg: "ES256", kid: (await getKeySet(config)).signer.kid, typ: "JWT" })
        .sign(strangerKey),
      // A `cnf` the service never writes (binds to nothing it could check).
      await signedByService({ ...claims, cnf: { jkt: "x", x5t: "y" } }),
      // An old Nhost project's token (HS256, issuer hasura-auth), as the import accepts on the service's own API.
      await new SignJWT({ "https://hasura.io/jwt/claims": claims["https://hasura.io/jwt/claims"] as object })
        .setProtectedHeader({ alg: "HS256" })
        .setIssuer("hasura-auth")
        .setSubject(String(claims.sub))
        .setIssuedAt()
        .setExpirationTime("15m")
        .sign(new TextEncoder().encode("an-old-nhost-project-secret-of-32-chars")),
    ];
    const [control, ...answers] = await Promise.all([
      authenticateThrough(bearer(resigned), live),
      ...tokens.map((token) => authenticateThrough(bearer(token), live)),
    ]);
    expect(control?.session).toEqual({ id: first.refreshTokenId, live: true });
    expect(answers).toEqual(tokens.map(() => null));
    const verdicts = await Promise.all(tokens.map((token) => rpc("AUTH", "verifyToken", token)));
    expect(verdicts).toEqual(tokens.map(() => ({ active: false, reason: "invalid-token" })));
  });
});

describe("live: the session's family, and nothing else, answers", () => {
  // Threat: a token whose `sid` and `session_locator` disagree (a migration gone wrong, a bug that signs the wrong
  // pair) answered by another session's family: a `live` true for a session that ended. The family is looked up by
  // `sid` inside the object `session_locator` names, so a pair that does not belong together is never live, and a
  // token without the pair (minted before the claim) is not taken as live either.
  it("sid and session_locator that disagree, a malformed locator, no locator: not live", async () => {
    const second = await signIn(email);
    const secondLocator = decodeJwt(second.accessToken).session_locator;
    const { session_locator: _dropped, ...withoutLocator } = claims;
    const tokens = await Promise.all([
      signedByService({ ...claims, session_locator: secondLocator }),
      signedByService({ ...claims, sid: second.refreshTokenId }),
      signedByService({ ...claims, session_locator: "../x" }),
      signedByService({ ...claims, session_locator: 123456 }),
      signedByService({ ...claims, sid: `${first.refreshTokenId}${"0".repeat(200)}` }),
      signedByService(withoutLocator),
    ]);
    const answers = await Promise.all([
      authenticateThrough(bearer(second.accessToken), live),
      ...tokens.map((token) => authenticateThrough(bearer(token), live)),
    ]);
    expect(answers[0]?.session).toEqual({ id: second.refreshTokenId, live: true });
    expect(answers.slice(1)).toEqual(tokens.map(() => null));
    // Without `live` the same tokens verify: only the liveness question refuses them.
    expect((await authenticateThrough(bearer(tokens[0]!)))?.user.id).toBe(first.user.id);
  });

  // Threats: a stolen refresh token replayed (the family ends, RFC 9700 §4.14.2) while its access tokens stay good in
  // the app's Workers; a password change ("sign out my other devices") or a deletion leaving sessions and personal
  // access tokens alive there.
  it("a replayed refresh token, a password change, a deleted user: refused by live at once", async () => {
    const noGrace = service({ ...NO_VERIFICATION, AUTH_REFRESH_TOKEN_REUSE_INTERVAL: "0" });
    const victim = uniqueEmail("attack-victim");
    const [replayed, kept, other] = [await signUp(svc, victim), await signIn(victim), await signIn(victim)];
    const pat = await svc.post(
      "/pat",
      { expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
      kept.accessToken,
    );
    const { personalAccessToken } = (await pat.json()) as { personalAccessToken: string };

    const renewed = await noGrace.post("/token", { refreshToken: replayed.refreshToken });
    expect(renewed.status).toBe(200);
    const { accessToken: renewedToken } = (await renewed.json()) as { accessToken: string };
    expect((await noGrace.post("/token", { refreshToken: replayed.refreshToken })).status).toBe(401);

    const changed = await svc.request("POST", "/user/password", {
      token: kept.accessToken,
      json: { newPassword: `${PASSWORD} again` },
    });
    expect(changed.status, await changed.clone().text()).toBe(200);
    const [replayedOld, replayedNew, otherDevice, pattoken, keptSession] = await Promise.all([
      authenticateThrough(bearer(replayed.accessToken), live),
      authenticateThrough(bearer(renewedToken), live),
      authenticateThrough(bearer(other.accessToken), live),
      authenticateThrough(bearer(personalAccessToken)),
      authenticateThrough(bearer(kept.accessToken), live),
    ]);
    expect([replayedOld, replayedNew, otherDevice, pattoken]).toEqual([null, null, null, null]);
    expect(keptSession?.session).toEqual({ id: kept.refreshTokenId, live: true });

    const deleted = await svc.request("DELETE", `/admin/users/${kept.user.id}`, { headers: ADMIN });
    expect(deleted.ok).toBe(true);
    const [afterDelete, verdict, profile] = await Promise.all([
      authenticateThrough(bearer(kept.accessToken), live),
      rpc("AUTH", "verifyToken", kept.accessToken, { live: true }),
      rpc("AUTH", "getUser", kept.user.id),
    ]);
    expect([afterDelete, verdict, profile]).toEqual([null, { active: false, reason: "session-ended" }, null]);
  });
});

describe("DPoP through the binding", () => {
  // Threats: a proof made for another token (`ath`), for the service's own URL replayed at a consumer, or an unbound
  // token sent as DPoP to look bound. The proof names the URL the consumer received (docs/workers.md): the request
  // the client sent, which is the only one its proof can be for. Its query is not part of `htu` (RFC 9449 §4.3).
  it("ath of another token, the service's URL, an unbound token as DPoP: nobody; a query on the URL is no matter", async () => {
    const key = await dpopKey();
    const signInUrl = `${SERVER}/auth/v1/signin/email-password`;
    const bound = await signIn(email, { dpop: await key.proof("POST", signInUrl) });
    const other = await signIn(email, { dpop: await key.proof("POST", signInUrl) });
    const token = bound.accessToken;
    const dpop = (proof: string, presented = token) => ({ authorization: `DPoP ${presented}`, dpop: proof });
    const [accepted, ...refused] = await Promise.all([
      // The control: a proof for the consumer's URL without its query, with `live` in the query.
      authenticateThrough(dpop(await key.proof("GET", API, token)), live),
      authenticateThrough(dpop(await key.proof("GET", API, other.accessToken))),
      authenticateThrough(dpop(await key.proof("GET", API))),
      authenticateThrough(dpop(await key.proof("GET", `${SERVER}/auth/v1/user`, token))),
      authenticateThrough(dpop(await key.proof("GET", API, first.accessToken), first.accessToken)),
    ]);
    expect(accepted?.session).toEqual({ id: bound.refreshTokenId, live: true });
    expect(refused).toEqual([null, null, null, null]);
  });
});

describe("the cookie and personal access tokens", () => {
  // Threat: CSRF through a consumer with the service's cookie: an opaque (`null`) origin (a sandboxed frame, a
  // redirect), `Sec-Fetch-Site: none` on a POST, an origin that only starts like the consumer's, the consumer's host
  // over http, a cross-site fetch claiming the right Origin. The cookie is a real sign-in: the same cookie is taken on
  // a GET (the control). (The accepted same-site POSTs: auth-service.test.ts.)
  it("a null Origin, an Origin that is a prefix trick, Sec-Fetch-Site none: refused on an unsafe method", {
    timeout: PAGE_STEPS,
  }, async () => {
    const { browser, user } = await signedIn(accountService());
    const cookie = { cookie: `oauth2_session=${browser.jar.get("oauth2_session")}` };
    const post = { options: { cookie: true }, method: "POST" };
    const [control, ...answers] = await Promise.all([
      authenticateThrough(cookie, { options: { cookie: true } }),
      authenticateThrough({ ...cookie, origin: "null" }, post),
      authenticateThrough({ ...cookie, origin: "https://api.example.com.evil.example" }, post),
      authenticateThrough({ ...cookie, origin: "http://api.example.com" }, post),
      authenticateThrough({ ...cookie, "sec-fetch-site": "none" }, post),
      authenticateThrough(
        { ...cookie, "sec-fetch-site": "cross-site", origin: "https://api.example.com" },
        post,
      ),
    ]);
    expect(control?.user.id).toBe(user.id);
    expect(answers).toEqual([null, null, null, null, null]);
  });

  // Threat: a personal access token that expired still standing for its user in the app's Workers.
  it("an expired personal access token: nobody", async () => {
    const created = await svc.post(
      "/pat",
      { expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
      first.accessToken,
    );
    const { id, personalAccessToken } = (await created.json()) as { id: string; personalAccessToken: string };
    expect((await authenticateThrough(bearer(personalAccessToken)))?.credential).toBe("pat");
    for (const db of [env.DB, env.DB_1]) {
      await db
        .prepare("UPDATE personal_access_tokens SET expires_at = ? WHERE id = ?")
        .bind(Date.now() - 1000, id)
        .run();
    }
    expect(await authenticateThrough(bearer(personalAccessToken))).toBeNull();
  });
});

/** `env[binding][method](...args)` in the consumer, with arguments made there (`$make`), a throw reported as one. */
async function crafted(binding: string, method: string, ...args: unknown[]) {
  const response = await env.BINDING_CONSUMER.fetch("https://consumer.test/__crafted", {
    method: "POST",
    body: JSON.stringify({ binding, method, args }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { answer?: { ok?: false; error?: { code: string } }; thrown?: string };
}

describe("AuthAdmin's callers and arguments", () => {
  async function withAdminBinding(work: () => Promise<void>): Promise<void> {
    const platform = getConfig(env).platform;
    platform.adminBindingEnabled = true;
    try {
      await work();
    } finally {
      platform.adminBindingEnabled = false;
    }
  }

  // Threats: a caller name that forges an audit line (a newline and a JSON object, a NUL) or floods it (10 kB); an
  // argument that makes the service throw (a 500-like fault the consumer cannot read) or hang: a function (RPC hands
  // over a stub), a Proxy, a deep nest, a megabyte of string. Each is an error value. Only a nest deeper than the
  // runtime's structured clone can walk throws, in the consumer's own call, before anything reaches the service.
  it("a caller with control characters or 10 kB: refused and nothing done; bad arguments: error values", async () => {
    const refusedEmail = uniqueEmail("attack-admin");
    expect((await rpc("ADMIN_CONTROL", "createUser", { email: refusedEmail })).error.code).toBe(
      "disabled-endpoint",
    );
    await withAdminBinding(async () => {
      const callers = await Promise.all([
        rpc("ADMIN_CONTROL", "createUser", { email: refusedEmail }),
        rpc("ADMIN_LONG", "createUser", { email: refusedEmail }),
      ]);
      for (const answer of callers) expect(answer.error.code).toBe("invalid-request");
      // Nothing was created: the same address is free for a named caller.
      const made = await rpc("ADMIN", "createUser", { email: refusedEmail });
      expect(made.email).toBe(refusedEmail);

      const invalid = {
        answer: { ok: false, error: { code: "invalid-request", message: expect.any(String) } },
      };
      const answers = await Promise.all([
        crafted("ADMIN", "createUser", { $make: "function" }),
        crafted("ADMIN", "createUser", { $make: "proxy" }),
        crafted("ADMIN", "updateUser", { $make: "function" }, { displayName: "x" }),
        crafted("ADMIN", "updateUser", made.id, { $make: "deep", size: 200, at: "metadata", into: {} }),
        crafted("ADMIN", "updateUser", made.id, { $make: "deep", size: 1_000, at: "metadata", into: {} }),
        crafted("ADMIN", "updateUser", made.id, {
          $make: "string",
          size: 1_000_000,
          at: "displayName",
          into: {},
        }),
        crafted("ADMIN", "createUser", { $make: "string", size: 1_000_000, at: "email", into: {} }),
        crafted("ADMIN", "deleteUser", { $make: "string", size: 1_000_000 }),
        crafted("ADMIN", "listAudit", { $make: "string", size: 1_000_000, at: "cursor", into: {} }),
        crafted("AUTH", "verifyToken", { $make: "string", size: 1_000_000 }),
        crafted("AUTH", "getUser", { $make: "function" }),
      ]);
      expect(answers).toEqual([
        ...Array.from({ length: 9 }, () => invalid),
        { answer: { active: false, reason: "invalid-token" } },
        { answer: null },
      ]);
      // A nest deeper than the runtime's structured clone can walk fails in the consumer's own call: the same clone
      // fails here, in this isolate, so nothing reached the service (which would have answered a value, above).
      const tooDeep = await crafted("ADMIN", "updateUser", made.id, {
        $make: "deep",
        size: 5_000,
        at: "metadata",
        into: {},
      });
      let nest = {};
      for (let level = 0; level < 5_000; level++) nest = { nest };
      expect(() => structuredClone(nest)).toThrow(RangeError);
      expect(tooDeep.thrown).toMatch(/^RangeError/);
      // The user is as it was made: no argument above wrote anything.
      expect(await rpc("AUTH", "getUser", made.id)).toMatchObject({
        displayName: made.displayName,
        metadata: made.metadata,
      });
    });
  });
});

describe("exhaustion", () => {
  // Threats: a megabyte Authorization header or a 10,000-character token costing the service a hash or a parse of
  // all of it; a request body read by authenticate (a stream that never ends would hang it); a crowd of calls in
  // flight at once losing answers.
  it("a 1 MB header, a 10,000-character token, a body that never ends: nobody or its user, at once", async () => {
    const long = `${"a".repeat(3_000)}.${"b".repeat(4_000)}.${"c".repeat(3_000)}`;
    const answers = await Promise.all([
      authenticateThrough({ authorization: `Bearer ${"a".repeat(1_000_000)}` }),
      authenticateThrough(bearer(long), live),
      rpc("AUTH", "verifyToken", long, { live: true }),
    ]);
    expect(answers).toEqual([null, null, { active: false, reason: "invalid-token" }]);

    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        if (pulled < 4) controller.enqueue(new Uint8Array(64 * 1024));
        // …and then it never ends.
      },
    });
    const response = await env.BINDING_CONSUMER.fetch(API, {
      method: "POST",
      headers: bearer(first.accessToken),
      body: endless,
      // @ts-expect-error: workerd's RequestInit takes a stream body without `duplex`; Node's types ask for it.
      duplex: "half",
    });
    expect(((await response.json()) as { answer: { user: { id: string } } }).answer.user.id).toBe(
      first.user.id,
    );
  });

  it("300 calls in flight at once: every one answers", async () => {
    const answers = await Promise.all(
      Array.from({ length: 300 }, (_, index) =>
        index % 3 === 0
          ? rpc("AUTH", "verifyToken", first.accessToken, { live: index % 2 === 0 })
          : authenticateThrough(bearer(first.accessToken), index % 2 === 0 ? live : {}),
      ),
    );
    for (const [index, answer] of answers.entries()) {
      if (index % 3 === 0) expect(answer).toMatchObject({ active: true, userId: first.user.id });
      else expect(answer?.user.id).toBe(first.user.id);
    }
  });
});
