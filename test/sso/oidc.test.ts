import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { slotOfUser } from "../../src/db/shards";
import { expectUnavailable } from "../faults/support";
import { decodeJwt, sessionFromRefresh, signUp, uniqueEmail } from "../helpers";
import {
  atIdp,
  callback,
  IDP,
  oidcConnection,
  orgWithDomain,
  personAtIdp,
  recordedMethod,
  ssoService,
  ssoSignIn,
  startSso,
  uniqueDomain,
} from "./support";

/**
 * Enterprise OIDC connections against a real OpenID provider (oidc-provider on loopback, test/fakes/oidc-idp.ts):
 * the whole way through `POST /sso/start`, the IdP and the callback, and the forgeries a token endpoint could send.
 */

const svc = ssoService();

async function userRow(email: string) {
  for (const db of [env.DB, env.DB_1]) {
    const row = await db
      .prepare("SELECT id, display_name, email_verified FROM users WHERE email = ?")
      .bind(email)
      .first();
    if (row) return row as { id: string; display_name: string; email_verified: number };
  }
  return undefined;
}

const membership = (orgId: string, userId: string) =>
  env.DB.prepare("SELECT role, source, provisioned, active FROM org_members WHERE org_id = ? AND user_id = ?")
    .bind(orgId, userId)
    .first<{ role: string; source: string; provisioned: number; active: number }>();

describe("an OIDC connection", () => {
  it("signs a new person in just in time: user, membership, session, then updates name and role", async () => {
    const org = await orgWithDomain(svc);
    await oidcConnection(svc, org, {
      scopes: ["email", "profile", "groups"],
      roleMapping: { "idp-admins": "admin" },
    });
    const email = `ana@${org.domain}`;
    const sub = await personAtIdp({ email, email_verified: true, name: "Ana Lima", groups: ["staff"] });
    const back = await ssoSignIn(svc, email);
    expect(back.get("error"), back.get("errorDescription") ?? "").toBeNull();
    // The session starts in the org: its token says so (its refreshes read the membership beside the rotation).
    expect(back.get("refreshToken")![14]).toBe("8");
    const session = await sessionFromRefresh(svc, back.get("refreshToken")!);
    expect(session.user).toMatchObject({ email, displayName: "Ana Lima", emailVerified: true });
    // The JIT membership carries its user's slot (an org switch from the user's shard reads it beside the rotation).
    const slot = await env.DB.prepare(
      "SELECT user_slot AS slot FROM org_members WHERE org_id = ? AND user_id = ?",
    )
      .bind(org.orgId, session.user.id)
      .first<{ slot: number }>();
    expect(slot?.slot).toBe(slotOfUser(session.user.id));
    expect(await membership(org.orgId, session.user.id)).toEqual({
      role: "member",
      source: "jit",
      provisioned: 1,
      active: 1,
    });
    // A later sign-in: the IdP renamed the person and put them in the group mapped to admin.
    await personAtIdp({ email, sub, email_verified: true, name: "Ana Souza", groups: ["idp-admins"] });
    const again = await ssoSignIn(svc, email);
    const second = await sessionFromRefresh(svc, again.get("refreshToken")!);
    expect(second.user.id).toBe(session.user.id);
    expect(second.user.displayName).toBe("Ana Souza");
    expect((await membership(org.orgId, session.user.id))?.role).toBe("admin");
    expect(decodeJwt(second.accessToken).payload.sub).toBe(session.user.id);
    // The session starts inside the org whose IdP vouched for the person, with the role the groups give.
    const claims = decodeJwt(second.accessToken).payload as Record<string, unknown>;
    expect(claims.org_id).toBe(org.orgId);
    expect(claims["https://hasura.io/jwt/claims"]).toMatchObject({
      "x-hasura-org-id": org.orgId,
      "x-hasura-org-role": "admin",
    });
  });

  // Threat: the org left with no owner. A JIT member made owner by hand, then the last owner once the creator left,
  // was demoted to the IdP's role by their next sign-in: nobody could manage the org's connections or tokens.
  it("never demotes an owner: a JIT member made owner keeps the role through later sign-ins", async () => {
    const org = await orgWithDomain(svc);
    await oidcConnection(svc, org);
    const email = `jay@${org.domain}`;
    const sub = await personAtIdp({ email, email_verified: true });
    const first = await sessionFromRefresh(svc, (await ssoSignIn(svc, email)).get("refreshToken")!);
    const jay = first.user.id;
    expect(await membership(org.orgId, jay)).toMatchObject({ role: "member", source: "jit" });
    const promoted = await svc.request("PATCH", `/orgs/${org.orgId}/members/${jay}`, {
      json: { role: "owner" },
      token: org.owner.accessToken,
    });
    expect(promoted.status).toBe(200);
    const left = await svc.request("DELETE", `/orgs/${org.orgId}/members/${org.owner.user.id}`, {
      token: org.owner.accessToken,
    });
    expect(left.status).toBe(204);
    await personAtIdp({ email, sub, email_verified: true });
    const again = await sessionFromRefresh(svc, (await ssoSignIn(svc, email)).get("refreshToken")!);
    expect(await membership(org.orgId, jay)).toMatchObject({ role: "owner", source: "jit" });
    const claims = decodeJwt(again.accessToken).payload as Record<string, Record<string, unknown>>;
    expect(claims["https://hasura.io/jwt/claims"]?.["x-hasura-org-role"]).toBe("owner");
  });

  it("signs in an existing user of the domain and makes them a member (no second account)", async () => {
    const org = await orgWithDomain(svc);
    await oidcConnection(svc, org);
    const email = `bo@${org.domain}`;
    const existing = await signUp(svc, email);
    await personAtIdp({ email });
    const back = await ssoSignIn(svc, email);
    const session = await sessionFromRefresh(svc, back.get("refreshToken")!);
    expect(session.user.id).toBe(existing.user.id);
    expect(await membership(org.orgId, existing.user.id)).toMatchObject({ source: "jit", provisioned: 0 });
  });

  // Threat: a person reading their sessions (or an operator the audit) cannot tell an enterprise sign-in from an
  // unknown one — the session list said "unknown" and the audit "other".
  it("records its method, sso:oidc, in the session list and the audit", async () => {
    const org = await orgWithDomain(svc);
    await oidcConnection(svc, org);
    const email = `method@${org.domain}`;
    await personAtIdp({ email });
    const session = await sessionFromRefresh(svc, (await ssoSignIn(svc, email)).get("refreshToken")!);
    expect(await recordedMethod(svc, session)).toEqual({ listed: "sso:oidc", audited: "sso:oidc" });
  });

  it("answers the IdP's URL with PKCE, state, nonce and the email as login hint; a form post is a 303", async () => {
    const org = await orgWithDomain(svc);
    const { clientId } = await oidcConnection(svc, org);
    const { url, cookie } = await startSso(svc, { domain: org.domain });
    const query = new URL(url).searchParams;
    expect(query.get("client_id")).toBe(clientId);
    expect(query.get("code_challenge_method")).toBe("S256");
    for (const name of ["state", "nonce", "code_challenge"])
      expect(query.get(name)?.length).toBeGreaterThan(20);
    expect(cookie).toMatch(/^sso-flow=/);
    const form = await svc.request("POST", "/sso/start", {
      body: new URLSearchParams({ email: `x@${org.domain}` }),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(form.status).toBe(303);
    expect(new URL(form.headers.get("location")!).searchParams.get("login_hint")).toBe(`x@${org.domain}`);
  });

  it("refuses an unknown domain, a redirectTo off the allow-list, and a public mail domain's email", async () => {
    for (const body of [
      { email: `a@${uniqueDomain()}` },
      { email: "someone@gmail.com" },
      { orgSlug: "no-such-org" },
    ]) {
      const response = await svc.post("/sso/start", body);
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: string }).error).toBe("sso-connection-not-found");
    }
    const org = await orgWithDomain(svc);
    await oidcConnection(svc, org);
    const open = await svc.post("/sso/start", {
      domain: org.domain,
      redirectTo: "https://evil.example/steal",
    });
    expect(open.status).toBe(400);
    expect(((await open.json()) as { error: string }).error).toBe("redirectTo-not-allowed");
  });
  // Threat: an IdP that is down or answers nonsense must not hang the sign-in or leak how the fetch failed.
  it("answers 503 when the IdP's discovery can't be read, and saves nothing", async () => {
    const org = await orgWithDomain(svc);
    const created = await svc.post(
      `/orgs/${org.orgId}/connections`,
      { type: "oidc", issuer: `${IDP}/no-such-issuer`, clientId: "c", clientSecret: "s" },
      org.owner.accessToken,
    );
    expect(created.status).toBe(201);
    const response = await svc.post("/sso/start", { domain: org.domain });
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBeTruthy();
  });
});

describe("refused: what a rogue IdP or a forged answer tries", () => {
  /** A sign-in whose ID token the IdP's token endpoint forges as `tamper` says; the callback's redirect query. */
  async function forgedSignIn(tamper: Parameters<typeof personAtIdp>[0]["tamper"]) {
    const org = await orgWithDomain(svc);
    await oidcConnection(svc, org);
    const email = `eve-${crypto.randomUUID().slice(0, 6)}@${org.domain}`;
    await personAtIdp({ email, tamper });
    const back = await ssoSignIn(svc, email);
    return { back, email };
  }

  // Threat: an ID token minted for another issuer (a mix-up, or a token endpoint speaking for someone else).
  it("a wrong issuer", async () => {
    const { back, email } = await forgedSignIn("issuer");
    expect(back.get("error")).toBe("sso-assertion-invalid");
    expect(await userRow(email)).toBeUndefined();
  });

  // Threat: an ID token issued to another client (token substitution from another relying party).
  it("a wrong audience", async () => {
    const { back } = await forgedSignIn("audience");
    expect(back.get("error")).toBe("sso-assertion-invalid");
  });

  // Threat: an ID token replayed from another sign-in (the nonce binds it to this one; OIDC Core §3.1.2.1).
  it("a nonce of another sign-in", async () => {
    const { back } = await forgedSignIn("nonce");
    expect(back.get("error")).toBe("sso-assertion-invalid");
  });

  // Threat: a token endpoint that is not the issuer's (its discovery points elsewhere) signing with its own key.
  it("a signature by a key the IdP never published", async () => {
    const { back, email } = await forgedSignIn("other-key");
    expect(back.get("error")).toBe("sso-assertion-invalid");
    expect(await userRow(email)).toBeUndefined();
  });

  // Threat: `alg: none`, the oldest JWT forgery.
  it("an unsigned token", async () => {
    const { back } = await forgedSignIn("no-signature");
    expect(back.get("error")).toBe("sso-assertion-invalid");
  });

  // Threat: an old ID token replayed after it expired.
  it("an expired token", async () => {
    const { back } = await forgedSignIn("expired");
    expect(back.get("error")).toBe("sso-assertion-invalid");
  });

  // Threat: the callback URL (code and state) used twice: the state is taken once, by a DELETE … RETURNING.
  it("a replayed state", async () => {
    const org = await orgWithDomain(svc);
    await oidcConnection(svc, org);
    const email = `rep@${org.domain}`;
    await personAtIdp({ email });
    const started = await startSso(svc, { email });
    const location = await atIdp(started.url);
    expect((await callback(svc, location, started.cookie)).get("refreshToken")).toBeTruthy();
    expect((await callback(svc, location, started.cookie)).get("error")).toBe("invalid-state");
  });

  // Threat: login CSRF — an attacker's half-finished sign-in completed in the victim's browser (RFC 9700 §4.7).
  it("a callback opened in another browser completes nothing, and the right browser still can", async () => {
    const org = await orgWithDomain(svc);
    await oidcConnection(svc, org);
    const email = `csrf@${org.domain}`;
    await personAtIdp({ email });
    const started = await startSso(svc, { email });
    const location = await atIdp(started.url);
    const victimsOwn = (await startSso(svc, { email })).cookie;
    for (const cookie of ["", victimsOwn]) {
      expect((await callback(svc, location, cookie)).get("error")).toBe("invalid-state");
    }
    expect((await callback(svc, location, started.cookie)).get("refreshToken")).toBeTruthy();
  });

  // Threat: a rogue IdP (any org owner can add one) asserting an address outside its verified domains, to take over
  // `victim@gmail.com` or create accounts in someone else's name.
  it("an email outside the org's verified domains: refused, no user made", async () => {
    const org = await orgWithDomain(svc);
    await oidcConnection(svc, org);
    const outsider = `${crypto.randomUUID().slice(0, 8)}@${uniqueDomain("elsewhere")}`;
    const sub = await personAtIdp({ email: outsider });
    const started = await startSso(svc, { domain: org.domain });
    const back = await callback(svc, await atIdp(started.url, sub), started.cookie);
    expect(back.get("error")).toBe("sso-email-outside-domains");
    expect(await userRow(outsider)).toBeUndefined();
  });

  // Threat: the same rogue IdP naming an existing account outside its domains: never signed in, never linked.
  it("an existing user outside the domains is not signed in nor made a member", async () => {
    const org = await orgWithDomain(svc);
    await oidcConnection(svc, org);
    const victim = await signUp(svc, uniqueEmail("victim"));
    const sub = await personAtIdp({ email: victim.user.email });
    const started = await startSso(svc, { domain: org.domain });
    const back = await callback(svc, await atIdp(started.url, sub), started.cookie);
    expect(back.get("error")).toBe("sso-email-outside-domains");
    expect(back.get("refreshToken")).toBeNull();
    expect(await membership(org.orgId, victim.user.id)).toBeNull();
  });

  // Threat: a domain claimed but never proven (anyone can type acme.com): it routes nothing and vouches for no one.
  it("an unverified domain neither routes nor signs in", async () => {
    const org = await orgWithDomain(svc, { verify: false });
    await oidcConnection(svc, org);
    expect((await svc.post("/sso/start", { email: `x@${org.domain}` })).status).toBe(404);
    const sub = await personAtIdp({ email: `x@${org.domain}` });
    const started = await startSso(svc, { orgSlug: await slugOf(org.orgId) });
    const back = await callback(svc, await atIdp(started.url, sub), started.cookie);
    expect(back.get("error")).toBe("sso-email-outside-domains");
  });

  // Threat: an IdP that says it did not verify the address vouches for nothing.
  it("email_verified false", async () => {
    const org = await orgWithDomain(svc);
    await oidcConnection(svc, org);
    const email = `unv@${org.domain}`;
    await personAtIdp({ email, email_verified: false });
    expect((await ssoSignIn(svc, email)).get("error")).toBe("sso-assertion-invalid");
    expect(await userRow(email)).toBeUndefined();
  });
});

describe("the IdP's token endpoint down", () => {
  /** The service whose code exchange at the IdP gets `answer` in place of the IdP's; every other call reaches it. */
  function withTokenEndpoint(answer: () => Response) {
    const idpOrigin = new URL(IDP).origin;
    return ssoService({
      OUTBOUND: {
        fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
          const request = new Request(input, init);
          const url = new URL(request.url);
          const exchange = request.method === "POST" && url.origin === idpOrigin && url.pathname === "/token";
          return exchange ? answer() : fetch(request);
        },
      },
    });
  }

  /** A sign-in through `withTokenEndpoint(answer)`, up to its callback: the callback's raw answer. */
  async function callbackWith(answer: () => Response) {
    const down = withTokenEndpoint(answer);
    const org = await orgWithDomain(svc);
    await oidcConnection(svc, org);
    const email = `out-${crypto.randomUUID().slice(0, 6)}@${org.domain}`;
    await personAtIdp({ email });
    const started = await startSso(down, { email });
    const location = await atIdp(started.url);
    const response = await down.request("GET", location, { headers: { cookie: started.cookie } });
    return { response, email };
  }

  const outages = [
    ["503 with an HTML page", () => new Response("<html>down for maintenance</html>", { status: 503 })],
    [
      "503 with temporarily_unavailable",
      () => Response.json({ error: "temporarily_unavailable" }, { status: 503 }),
    ],
    ["429 with slow_down", () => Response.json({ error: "slow_down" }, { status: 429 })],
    ["502 from a proxy", () => new Response("Bad Gateway", { status: 502 })],
  ] as const;

  // Threat: an IdP outage shown to every employee as "the identity provider's answer could not be verified", which
  // reads as a forgery or a broken connection: operators chase certificates and settings, and nobody retries.
  it.each(outages)(
    "answering %s: 503 with Retry-After, not sso-assertion-invalid; no user",
    async (_, answer) => {
      const { response, email } = await callbackWith(answer);
      await expectUnavailable(response, "token endpoint down");
      expect(await userRow(email)).toBeUndefined();
    },
  );

  const refusals = [
    ["400 invalid_grant", () => Response.json({ error: "invalid_grant" }, { status: 400 })],
    // RFC 6749 §5.2: a client that authenticated with Basic may be refused with 401 and a challenge.
    [
      "401 invalid_client with a Basic challenge",
      () =>
        Response.json(
          { error: "invalid_client" },
          { status: 401, headers: { "www-authenticate": 'Basic realm="idp"' } },
        ),
    ],
  ] as const;

  // Threat: the other way round, a refusal retried forever (or a 500): the IdP's 4xx verdict stays a refusal.
  it.each(refusals)("answering %s: still the redirect with sso-assertion-invalid", async (_, answer) => {
    const { response, email } = await callbackWith(answer);
    expect(response.status, await response.clone().text()).toBe(302);
    expect(new URL(response.headers.get("location")!).searchParams.get("error")).toBe(
      "sso-assertion-invalid",
    );
    expect(await userRow(email)).toBeUndefined();
  });
});

async function slugOf(orgId: string) {
  const row = await env.DB.prepare("SELECT slug FROM organizations WHERE id = ?")
    .bind(orgId)
    .first<{ slug: string }>();
  return row!.slug;
}
