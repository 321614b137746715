// The Supabase face's signInWithSSO (contract supabase.md §2), routed to an organization's enterprise connection
// (src/sso/), with the real supabase-js and the OpenID provider of test/fakes/oidc-idp.ts. The browser is played by
// hand: the face's /authorize (the sealed ticket) → the IdP → the connection's callback → the face's /callback → the
// app. Threats: a ticket forged or tampered with, login CSRF (an attacker's finished sign-in opened in a victim's
// browser), a replayed code.
import { createClient } from "@supabase/supabase-js";
import { describe, expect, it } from "vitest";
import { decodeJwt } from "../../helpers";
import { authnRequestOf, postToAcs, samlOrg } from "../../sso/saml-support/connection";
import { signedResponse, toBase64 } from "../../sso/saml-support/idp";
import { ADMIN, atIdp, cookieOf, IDP, oidcConnection, orgWithDomain, personAtIdp } from "../../sso/support";
import { FACE, fetchThrough, PUBLISHABLE_KEY, supabaseClient, supabaseService } from "./support";

const APP = "https://app.example.com/after-sso";
const svc = supabaseService({
  OUTBOUND: undefined,
  AUTH_OUTBOUND_ALLOW_LOCAL: "true",
  AUTH_DNS_RESOLVER_URL: `${IDP}/dns-query`,
  AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false",
  AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: "https://app.example.com",
});

const redirectOf = (response: Response) => {
  expect(response.status, `expected a redirect, got ${response.status}`).toBe(302);
  return new URL(response.headers.get("location")!);
};
const open = (url: URL | string, cookie = "") =>
  svc.request("GET", url.toString(), { headers: cookie ? { cookie } : {} });

/** An org with a verified domain, an OIDC connection, and a person of that domain at the IdP. */
async function enterprise() {
  const org = await orgWithDomain(svc);
  const connection = await oidcConnection(svc, org);
  const email = `ana-${crypto.randomUUID().slice(0, 6)}@${org.domain}`;
  const sub = await personAtIdp({ email, email_verified: true });
  return { org, connection, email, sub };
}

/** One browser from the face's URL to the face's /callback. */
async function toFaceCallback(url: string, sub: string, cookie = "") {
  const start = await open(url, cookie);
  const browser = cookie || cookieOf(start);
  // With a domain or a connection there is no login hint: the person is named at the IdP.
  const back = await atIdp(redirectOf(start).toString(), sub);
  const landing = redirectOf(await open(back, browser));
  return { landing, browser };
}

describe("signInWithSSO", () => {
  it("signs in by domain through the org's connection, the session in the fragment, inside the org", async () => {
    const { org, email, sub } = await enterprise();
    const client = supabaseClient(svc);
    const { data, error } = await client.auth.signInWithSSO({
      domain: org.domain,
      options: { redirectTo: APP, skipBrowserRedirect: true },
    });
    expect(error).toBeNull();
    expect(data?.url).toContain(`${FACE}/auth/v1/authorize?sso_ticket=`);
    const { landing, browser } = await toFaceCallback(data!.url, sub);
    expect(`${landing.origin}${landing.pathname}`, landing.toString()).toBe(`${FACE}/auth/v1/callback`);
    expect(landing.searchParams.get("error"), landing.toString()).toBeNull();
    const back = redirectOf(await open(landing, browser));
    expect(`${back.origin}${back.pathname}`).toBe(APP);
    const fragment = new URLSearchParams(back.hash.slice(1));
    const claims = decodeJwt(fragment.get("access_token")!).payload;
    expect(claims.email).toBe(email);
    expect(claims.amr).toEqual([{ method: "sso/saml", timestamp: expect.any(Number) }]);
    expect(claims["https://hasura.io/jwt/claims"]).toMatchObject({ "x-hasura-org-id": org.orgId });
  });

  it("signs in by provider_id under PKCE: ?code=, then exchangeCodeForSession; the code once", async () => {
    const { connection, email, sub } = await enterprise();
    const client = createClient(FACE, PUBLISHABLE_KEY, {
      global: { fetch: fetchThrough(svc) },
      auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false, flowType: "pkce" },
    });
    const { data } = await client.auth.signInWithSSO({
      providerId: connection.id,
      options: { redirectTo: APP, skipBrowserRedirect: true },
    });
    const { landing, browser } = await toFaceCallback(data!.url, sub);
    const code = redirectOf(await open(landing, browser)).searchParams.get("code")!;
    const { data: exchanged, error } = await client.auth.exchangeCodeForSession(code);
    expect(error).toBeNull();
    expect(exchanged.session?.user.email).toBe(email);
    // Threat: a replayed code.
    const again = await svc.request("POST", `${FACE}/auth/v1/token?grant_type=pkce`, {
      headers: { apikey: PUBLISHABLE_KEY, "content-type": "application/json" },
      body: JSON.stringify({ auth_code: code, code_verifier: "v".repeat(43) }),
    });
    expect(again.status).toBe(404);
  });

  it("signs in through a SAML connection under PKCE: the ACS, its bounce, the face's /callback, ?code=", async () => {
    const org = await samlOrg();
    const client = createClient(FACE, PUBLISHABLE_KEY, {
      global: { fetch: fetchThrough(svc) },
      auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false, flowType: "pkce" },
    });
    const { data } = await client.auth.signInWithSSO({
      providerId: org.connectionId,
      options: { redirectTo: APP, skipBrowserRedirect: true },
    });
    const start = await open(data!.url);
    const browser = start.headers
      .getSetCookie()
      .map((line) => line.split(";")[0])
      .join("; ");
    const requestId = /\sID="([^"]+)"/.exec(await authnRequestOf(redirectOf(start)))![1]!;
    const email = `saml-${crypto.randomUUID().slice(0, 6)}@${org.domain}`;
    const xml = await signedResponse({
      spEntityId: org.spEntityId,
      acsUrl: org.acsUrl,
      nameId: email,
      inResponseTo: requestId,
    });
    const acs = await postToAcs(svc, org, toBase64(xml));
    const bounce = new URL(acs.headers.get("location")!);
    const landing = redirectOf(await open(bounce, browser));
    expect(`${landing.origin}${landing.pathname}`, landing.toString()).toBe(`${FACE}/auth/v1/callback`);
    const code = redirectOf(await open(landing, browser)).searchParams.get("code")!;
    const { data: exchanged, error } = await client.auth.exchangeCodeForSession(code);
    expect(error).toBeNull();
    expect(exchanged.session?.user.email).toBe(email);
    expect(decodeJwt(exchanged.session!.access_token).payload["https://hasura.io/jwt/claims"]).toMatchObject({
      "x-hasura-org-id": org.orgId,
    });
  });

  // Threat: login CSRF. The attacker's finished sign-in, opened in the victim's browser, signs nothing in.
  it("does not finish an attacker's sign-in in another browser", async () => {
    const { org, sub } = await enterprise();
    const { data } = await supabaseClient(svc).auth.signInWithSSO({
      domain: org.domain,
      options: { redirectTo: APP, skipBrowserRedirect: true },
    });
    const attacker = await toFaceCallback(data!.url, sub);
    const victim = cookieOf(await open(data!.url));
    const back = redirectOf(await open(attacker.landing, victim));
    expect(new URLSearchParams(back.hash.slice(1)).get("error_code")).toBe("bad_oauth_state");
  });

  // Threat: an employee offboarded at the IdP keeping a password way in through the second face, or a session of the
  // face outliving the organization's decision to enforce its SSO.
  it("an organization's enforced SSO closes the face's password sign-in and ends its sessions", async () => {
    const { org } = await enterprise();
    const email = `bo-${crypto.randomUUID().slice(0, 6)}@${org.domain}`;
    const client = supabaseClient(svc);
    expect((await client.auth.signUp({ email, password: "correct horse battery" })).error).toBeNull();
    const enforced = await svc.request("PATCH", `/admin/orgs/${org.orgId}/sso`, {
      json: { enforce: true },
      headers: ADMIN,
    });
    expect(enforced.status, await enforced.clone().text()).toBe(200);

    const refused = await supabaseClient(svc).auth.signInWithPassword({
      email,
      password: "correct horse battery",
    });
    expect(refused.error?.status).toBe(403);
    expect(refused.error?.code).toBe("user_sso_managed");
    // The sessions that predate enforcement were ended when it began (src/auth/sso-sweep.ts): the refresh token is gone.
    const renewed = await client.auth.refreshSession();
    expect(renewed.error?.code).toBe("refresh_token_not_found");
    expect(renewed.data.session).toBeNull();
  });

  it("answers GoTrue's errors: no connection, both or neither selector, a forged ticket", async () => {
    const client = supabaseClient(svc);
    const unknown = await client.auth.signInWithSSO({
      domain: "nobody.example",
      options: { skipBrowserRedirect: true },
    });
    expect(unknown.error?.code).toBe("sso_provider_not_found");
    expect(unknown.error?.status).toBe(404);
    const post = (body: Record<string, unknown>) =>
      svc.request("POST", `${FACE}/auth/v1/sso`, {
        headers: { apikey: PUBLISHABLE_KEY, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    for (const body of [{}, { domain: "a.example", provider_id: crypto.randomUUID() }]) {
      const answer = await post(body);
      expect(answer.status).toBe(400);
      expect(await answer.json()).toMatchObject({ error_code: "validation_failed" });
    }
    // Threat: a ticket made up or altered (it is sealed: AES-GCM under the service's key).
    const forged = await open(`${FACE}/auth/v1/authorize?sso_ticket=${"x".repeat(120)}`);
    expect(forged.status).toBe(400);
    expect(await forged.json()).toMatchObject({ error_code: "bad_oauth_state" });
  });
});
