// AuthService through a real service binding (contract platform.md §1, docs/workers.md): a consumer Worker
// (test/fakes/binding-consumer.js) calls the Worker under test's `AuthService` entrypoint, as an app's Worker does.
import { env } from "cloudflare:test";
import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { accountService, PAGE_STEPS, signedIn } from "../account-center/support";
import { FACE, PUBLISHABLE_KEY, supabaseService } from "../faces/supabase/support";
import {
  NO_VERIFICATION,
  PASSWORD,
  SERVER,
  service,
  signUp,
  uniqueEmail,
  type WireSession,
} from "../helpers";
import { failingNamespace } from "../support/faults";
import { authenticateThrough, countingNamespace, dpopKey, rpc, watchD1 } from "./support";

const svc = service(NO_VERIFICATION);
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

let first: WireSession;
let email: string;

beforeAll(async () => {
  email = uniqueEmail("binding");
  first = await signUp(svc, email);
});

async function signIn(headers: Record<string, string> = {}): Promise<WireSession> {
  const response = await svc.request("POST", "/signin/email-password", {
    json: { email, password: PASSWORD },
    headers,
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as { session: WireSession }).session;
}

describe("authenticate", () => {
  it("a Bearer access token: the user, the session, the claims and the face, with no lookup", async () => {
    const answer = await authenticateThrough(bearer(first.accessToken));
    expect(answer).toMatchObject({
      user: { id: first.user.id, roles: expect.arrayContaining(["user"]), defaultRole: "user" },
      session: { id: first.refreshTokenId, live: false },
      claims: { sub: first.user.id, sid: first.refreshTokenId },
      face: "nhost",
      credential: "access-token",
    });
    // `live`: the session's family object says it stands.
    const live = await authenticateThrough(bearer(first.accessToken), { options: { live: true } });
    expect(live.session).toEqual({ id: first.refreshTokenId, live: true });
  });

  // Threat: a token stolen from a DPoP-bound session used without its key, or a proof made for another request
  // (another URL, method) or replayed, passing a consumer's check.
  it("DPoP: a bound token only with a fresh proof by its key over this request", async () => {
    const key = await dpopKey();
    const signInUrl = `${SERVER}/auth/v1/signin/email-password`;
    const session = await signIn({ dpop: await key.proof("POST", signInUrl) });
    expect(decodeJwt(session.accessToken).cnf).toBeDefined();
    const token = session.accessToken;
    const proof = await key.proof("GET", "https://api.example.com/things", token);
    const answer = await authenticateThrough({ authorization: `DPoP ${token}`, dpop: proof });
    expect(answer).toMatchObject({ user: { id: first.user.id }, session: { id: session.refreshTokenId } });
    // The same proof again: spent. Another URL, another method, no proof, the token as Bearer: nobody.
    const refused = await Promise.all([
      authenticateThrough({ authorization: `DPoP ${token}`, dpop: proof }),
      authenticateThrough({
        authorization: `DPoP ${token}`,
        dpop: await key.proof("GET", "https://evil.example.com/things", token),
      }),
      authenticateThrough(
        {
          authorization: `DPoP ${token}`,
          dpop: await key.proof("GET", "https://api.example.com/things", token),
        },
        { method: "DELETE" },
      ),
      authenticateThrough({ authorization: `DPoP ${token}` }),
      authenticateThrough(bearer(token)),
      // Another key's proof.
      authenticateThrough({
        authorization: `DPoP ${token}`,
        dpop: await (await dpopKey()).proof("GET", "https://api.example.com/things", token),
      }),
    ]);
    expect(refused).toEqual([null, null, null, null, null, null]);
  });

  it("a personal access token as Bearer: its user, no session", async () => {
    const created = await svc.post(
      "/pat",
      { expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
      first.accessToken,
    );
    expect(created.status).toBe(200);
    const { personalAccessToken } = (await created.json()) as { personalAccessToken: string };
    expect(await authenticateThrough(bearer(personalAccessToken))).toEqual({
      user: { id: first.user.id, roles: expect.arrayContaining(["user"]), defaultRole: "user" },
      session: null,
      claims: null,
      face: "nhost",
      credential: "pat",
    });
    expect(await authenticateThrough(bearer(crypto.randomUUID()))).toBeNull();
  });

  // Threat: a consumer honouring a session its user signed out of (a stolen laptop's tokens) until the access token
  // runs out. With `live`, the family object's word is asked: the sign-out is seen at once.
  it("live: a session signed out a moment ago is refused at once; without live its token still verifies", async () => {
    const session = await signIn();
    expect(
      (await authenticateThrough(bearer(session.accessToken), { options: { live: true } })).session,
    ).toEqual({ id: session.refreshTokenId, live: true });
    const out = await svc.post("/signout", { refreshToken: session.refreshToken }, session.accessToken);
    expect(out.status).toBe(200);
    const [live, notLive, verified] = await Promise.all([
      authenticateThrough(bearer(session.accessToken), { options: { live: true } }),
      authenticateThrough(bearer(session.accessToken)),
      rpc("AUTH", "verifyToken", session.accessToken, { live: true }),
    ]);
    expect(live).toBeNull();
    expect(notLive?.user.id).toBe(first.user.id);
    expect(verified).toEqual({ active: false, reason: "session-ended" });
  });

  // Threat: a disabled account keeps working in the app's Workers. Disabling ends every session in its family object
  // (src/auth/revocation.ts), so `live` refuses at once, and a personal access token is refused by its one read.
  it("live: a disabled user is refused, by token and by personal access token", async () => {
    const other = await signUp(svc, uniqueEmail("binding-disabled"));
    const created = await svc.post(
      "/pat",
      { expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
      other.accessToken,
    );
    const { personalAccessToken } = (await created.json()) as { personalAccessToken: string };
    expect((await authenticateThrough(bearer(personalAccessToken)))?.user.id).toBe(other.user.id);
    const disabled = await svc.request("PATCH", `/admin/users/${other.user.id}`, {
      headers: ADMIN,
      json: { disabled: true },
    });
    expect(disabled.status).toBe(200);
    const [live, pat, profile] = await Promise.all([
      authenticateThrough(bearer(other.accessToken), { options: { live: true } }),
      authenticateThrough(bearer(personalAccessToken)),
      rpc("AUTH", "getUser", other.user.id),
    ]);
    expect(live).toBeNull();
    expect(pat).toBeNull();
    expect(profile.disabled).toBe(true);
  });

  it("the Supabase face's tokens: accepted, the face named, its audience `authenticated`", async () => {
    const face = supabaseService();
    const response = await face.request("POST", `${FACE}/auth/v1/token?grant_type=password`, {
      json: { email, password: PASSWORD },
      headers: { apikey: PUBLISHABLE_KEY },
    });
    expect(response.status, await response.clone().text()).toBe(200);
    const { access_token: token } = (await response.json()) as { access_token: string };
    const [answer, verified, live] = await Promise.all([
      authenticateThrough(bearer(token), { options: { live: true } }),
      rpc("AUTH", "verifyToken", token, { audience: "authenticated" }),
      rpc("AUTH", "verifyToken", token, { live: true }),
    ]);
    expect(answer).toMatchObject({
      user: { id: first.user.id },
      session: { live: true },
      claims: { aud: "authenticated", role: "authenticated", email },
      face: "supabase",
    });
    expect(verified).toMatchObject({ active: true, userId: first.user.id, face: "supabase" });
    expect(live).toMatchObject({ active: true, sessionId: answer.session.id });
  });

  // Threat: CSRF through a consumer. A browser attaches the service's cookie to a request another site made it send;
  // the cookie is taken only when the consumer asks, and on an unsafe method only from the same site.
  it("the browser cookie: only with `cookie: true`, and an unsafe method only same-site", {
    timeout: PAGE_STEPS,
  }, async () => {
    const { browser, user } = await signedIn(accountService());
    const cookie = `oauth2_session=${browser.jar.get("oauth2_session")}`;
    const asked = { options: { cookie: true } };
    const [read, unasked, bare, crossSite, sameSite, sameOrigin, otherOrigin] = await Promise.all([
      authenticateThrough({ cookie }, asked),
      authenticateThrough({ cookie }),
      authenticateThrough({ cookie }, { ...asked, method: "POST" }),
      authenticateThrough({ cookie, "sec-fetch-site": "cross-site" }, { ...asked, method: "POST" }),
      authenticateThrough({ cookie, "sec-fetch-site": "same-site" }, { ...asked, method: "POST" }),
      authenticateThrough({ cookie, origin: "https://api.example.com" }, { ...asked, method: "DELETE" }),
      authenticateThrough({ cookie, origin: "https://evil.example" }, { ...asked, method: "POST" }),
    ]);
    expect(read).toMatchObject({ user: { id: user.id }, session: { live: true }, credential: "cookie" });
    expect([unasked, bare, crossSite, otherOrigin]).toEqual([null, null, null, null]);
    expect(sameSite?.user.id).toBe(user.id);
    expect(sameOrigin?.user.id).toBe(user.id);
  });

  // Threat: garbage from the internet making the binding throw (a consumer's 500) instead of answering "nobody".
  it("garbage is nobody, and a wrong argument is an error value, never a throw", async () => {
    const answers = await Promise.all([
      authenticateThrough(bearer("garbage")),
      authenticateThrough({ authorization: "Basic Zm9vOmJhcg==" }),
      authenticateThrough({ authorization: `Bearer ${first.accessToken.slice(0, -4)}AAAA` }),
      authenticateThrough({}),
      rpc("AUTH", "verifyToken", "garbage"),
      rpc("AUTH", "verifyToken", 42),
      rpc("AUTH", "getUser", "not-a-user"),
      rpc("AUTH", "getUser", { id: 1 }),
    ]);
    expect(answers).toEqual([
      null,
      null,
      null,
      null,
      { active: false, reason: "invalid-token" },
      { active: false, reason: "invalid-token" },
      null,
      null,
    ]);
    const wrong = await Promise.all([
      authenticateThrough(bearer(first.accessToken), { options: { live: "yes" } }),
      rpc("AUTH", "authenticate", "not a request"),
      rpc("AUTH", "verifyToken", first.accessToken, { audience: 7 }),
    ]);
    for (const answer of wrong) {
      expect(answer).toMatchObject({
        ok: false,
        error: { code: "invalid-request", message: expect.any(String) },
      });
    }
  });
});

// The contract's costs (docs/workers.md "Costs"), counted on the bindings the calls use: an access token without
// `live` asks neither D1 nor an object; `live` asks one object; a DPoP proof one object more (its jti); never D1.
it("costs: no D1 query at all; one object for live, one for a DPoP proof, none otherwise", async () => {
  const key = await dpopKey();
  const bound = await signIn({ dpop: await key.proof("POST", `${SERVER}/auth/v1/signin/email-password`) });
  // Warm: this isolate has the key set (read again at most every 10 s, src/signing-keys/keys.ts).
  await rpc("AUTH", "verifyToken", first.accessToken);
  // The D1 count sees every call in this workerd, and a queue batch of an earlier request (its consumer runs here)
  // may land in the window: the calls are measured until one run is clean, at most three. A query the path itself
  // made would be in every run.
  const d1Calls: number[] = [];
  for (let run = 0; run < 3 && !d1Calls.includes(0); run++) {
    const originals = { SESSION_FAMILIES: env.SESSION_FAMILIES, JTI_LEDGERS: env.JTI_LEDGERS };
    const families = countingNamespace(env.SESSION_FAMILIES);
    const ledgers = countingNamespace(env.JTI_LEDGERS);
    Object.assign(env, { SESSION_FAMILIES: families.binding, JTI_LEDGERS: ledgers.binding });
    const d1 = watchD1(env.DB, env.DB_1);
    try {
      const plain = await authenticateThrough(bearer(first.accessToken));
      const verified = await rpc("AUTH", "verifyToken", first.accessToken);
      expect([plain?.user.id, verified.active, families.objects, ledgers.objects]).toEqual([
        first.user.id,
        true,
        0,
        0,
      ]);
      const live = await authenticateThrough(bearer(first.accessToken), { options: { live: true } });
      expect([live?.session.live, families.objects]).toEqual([true, 1]);
      const proof = await key.proof("GET", "https://api.example.com/things", bound.accessToken);
      const dpop = await authenticateThrough({ authorization: `DPoP ${bound.accessToken}`, dpop: proof });
      expect([dpop?.user.id, ledgers.objects, families.objects]).toEqual([first.user.id, 1, 1]);
      d1Calls.push(d1.calls);
    } finally {
      d1.restore();
      Object.assign(env, originals);
    }
  }
  expect(d1Calls).toContain(0);
});

// Threat: an outage read as "nobody" (every user signed out) or thrown as a bare error the consumer cannot tell from
// a bug. A failing Durable Object is the catalogue's `service-unavailable`, as a value.
it("a Durable Object failing: service-unavailable as a value; healed, the same call answers", async () => {
  const families = env.SESSION_FAMILIES;
  const failing = failingNamespace(families);
  // The binding's calls read the Worker's env as they run (src/runtime/entrypoints/services.ts), the one this
  // file's env is: swapped for this test only, and put back whatever happens.
  Object.assign(env, { SESSION_FAMILIES: failing.binding });
  try {
    const [live, verified] = await Promise.all([
      authenticateThrough(bearer(first.accessToken), { options: { live: true } }),
      rpc("AUTH", "verifyToken", first.accessToken, { live: true }),
    ]);
    for (const answer of [live, verified]) {
      expect(answer).toEqual({
        ok: false,
        error: { code: "service-unavailable", message: expect.any(String) },
      });
    }
    expect(failing.fault.failures).toBe(2);
    // Without `live` no object is asked: the same token answers through the outage.
    expect((await authenticateThrough(bearer(first.accessToken)))?.user.id).toBe(first.user.id);
  } finally {
    Object.assign(env, { SESSION_FAMILIES: families });
  }
  expect((await rpc("AUTH", "verifyToken", first.accessToken, { live: true })).active).toBe(true);
});

describe("verifyToken and getUser", () => {
  it("verifyToken: the claims, the user and the session; an audience the token does not name is inactive", async () => {
    const [plain, withAudience] = await Promise.all([
      rpc("AUTH", "verifyToken", first.accessToken, { live: true }),
      rpc("AUTH", "verifyToken", first.accessToken, { audience: "authenticated" }),
    ]);
    expect(plain).toMatchObject({
      active: true,
      userId: first.user.id,
      sessionId: first.refreshTokenId,
      face: "nhost",
      claims: { sub: first.user.id },
    });
    expect(withAudience).toEqual({ active: false, reason: "audience" });
  });

  it("getUser: the profile, without secrets or sessions", async () => {
    const profile = await rpc("AUTH", "getUser", first.user.id);
    expect(profile).toMatchObject({
      id: first.user.id,
      email,
      displayName: expect.any(String),
      avatarUrl: expect.any(String),
      roles: expect.arrayContaining(["user"]),
      defaultRole: "user",
      metadata: expect.any(Object),
      emailVerified: expect.any(Boolean),
      phoneNumberVerified: false,
      disabled: false,
    });
    const text = JSON.stringify(profile);
    for (const secret of ["passwordHash", "password_hash", "totpSecret", "sessions", "refreshToken"]) {
      expect(text).not.toContain(secret);
    }
  });
});
