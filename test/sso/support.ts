import { env } from "cloudflare:test";
import { expect, inject } from "vitest";
import type { Tamper } from "../fakes/oidc-idp";
import { service, signUp, type TestService, uniqueEmail, type WireSession } from "../helpers";

/**
 * Enterprise sign-in in tests: the service with outbound calls going to loopback for real (the OIDC provider and the
 * DNS resolver of test/fakes/oidc-idp.ts), organizations made through the API, domains verified by the admin API.
 */

export const IDP = inject("oidcIdpUrl");
export const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

/** The service whose outbound fetches really leave (to loopback), as `wrangler dev` runs it. */
export function ssoService(overrides: Record<string, unknown> = {}) {
  return service({
    OUTBOUND: undefined,
    AUTH_OUTBOUND_ALLOW_LOCAL: "true",
    AUTH_DNS_RESOLVER_URL: `${IDP}/dns-query`,
    AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false",
    ...overrides,
  });
}

export const uniqueDomain = (tag = "acme") => `${tag}-${crypto.randomUUID().slice(0, 8)}.test`;

async function idp(path: string, body: unknown) {
  const response = await fetch(`${IDP}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`IdP ${path}: ${response.status} ${await response.text()}`);
}

/** A person at the IdP; `tamper` makes their ID token a forgery (test/fakes/oidc-idp.ts). */
export async function personAtIdp(person: {
  email: string;
  sub?: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[];
  tamper?: Tamper;
}) {
  const sub = person.sub ?? `sub-${crypto.randomUUID()}`;
  await idp("/__accounts", { ...person, sub });
  return sub;
}

export const setTxtRecord = (name: string, values: string[]) => idp("/__dns", { name, values });

export interface TestOrg {
  orgId: string;
  owner: WireSession;
  domain: string;
}

/** An org whose owner just signed up, with `domain` claimed and (unless told otherwise) verified by the admin API. */
export async function orgWithDomain(svc: TestService, { verify = true, domain = uniqueDomain() } = {}) {
  const owner = await signUp(svc, uniqueEmail("owner"));
  const created = await svc.post("/orgs", { name: `Org ${domain}` }, owner.accessToken);
  expect(created.status).toBe(201);
  const { id: orgId } = (await created.json()) as { id: string };
  const claimed = await svc.post(`/orgs/${orgId}/domains`, { domain }, owner.accessToken);
  expect(claimed.status).toBe(201);
  if (verify) {
    const verified = await svc.request("POST", `/admin/orgs/${orgId}/domains/${domain}/verify`, {
      headers: ADMIN,
    });
    expect(verified.status).toBe(200);
  }
  return { orgId, owner, domain } satisfies TestOrg;
}

/** An OIDC connection of the org at the test IdP, its client registered there with the connection's callback. */
export async function oidcConnection(
  svc: TestService,
  org: TestOrg,
  extra: Record<string, unknown> = {},
): Promise<{ id: string; clientId: string }> {
  const clientId = `client-${crypto.randomUUID().slice(0, 8)}`;
  const response = await svc.post(
    `/orgs/${org.orgId}/connections`,
    { type: "oidc", issuer: IDP, clientId, clientSecret: "client secret", ...extra },
    org.owner.accessToken,
  );
  expect(response.status).toBe(201);
  const connection = (await response.json()) as { id: string; oidc: { redirectUri: string } };
  await idp("/__clients", {
    client_id: clientId,
    client_secret: "client secret",
    redirect_uris: [connection.oidc.redirectUri],
  });
  return { id: connection.id, clientId };
}

/** The `name=value` of the binding cookie a response set. */
export function cookieOf(response: Response): string {
  const set = response.headers.getSetCookie().find((cookie) => cookie.startsWith("sso-flow="));
  return set ? set.split(";")[0]! : "";
}

/** `POST /sso/start` as JSON: the IdP's URL and this browser's cookie. */
export async function startSso(svc: TestService, body: Record<string, unknown>, cookie = "") {
  const response = await svc.request("POST", "/sso/start", {
    json: body,
    headers: cookie ? { cookie } : {},
  });
  expect(response.status, await response.clone().text()).toBe(200);
  const { url } = (await response.json()) as { url: string };
  return { url, cookie: cookieOf(response) || cookie };
}

/** The person's browser at the IdP: the URL the IdP sends it back to (the service's callback). */
export async function atIdp(url: string, as?: string): Promise<string> {
  const query = new URLSearchParams({ url, ...(as ? { as } : {}) });
  const response = await fetch(`${IDP}/__drive?${query}`);
  if (!response.ok) throw new Error(`IdP drive: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { location: string }).location;
}

/** Opens the callback URL in a browser holding `cookie`; the redirect's query. */
export async function callback(svc: TestService, location: string, cookie: string) {
  const response = await svc.request("GET", location, { headers: cookie ? { cookie } : {} });
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location")!).searchParams;
}

/** A whole sign-in: start with the email, the IdP, the callback. */
export async function ssoSignIn(svc: TestService, email: string, sub?: string) {
  const started = await startSso(svc, { email });
  return callback(svc, await atIdp(started.url, sub), started.cookie);
}

/** How the session list (`GET /user/sessions`, its current item) and the audit's `signin.success` name a sign-in. */
export async function recordedMethod(svc: TestService, session: WireSession) {
  const listed = (await (await svc.get("/user/sessions", session.accessToken)).json()) as {
    items: { current: boolean; method: string | null }[];
  };
  const audit = (await (
    await svc.request("GET", `/admin/audit?userId=${session.user.id}&type=signin.success&limit=1`, {
      headers: ADMIN,
    })
  ).json()) as { items: { detail: { method?: string } }[] };
  return {
    listed: listed.items.find((item) => item.current)?.method,
    audited: audit.items[0]?.detail.method,
  };
}
