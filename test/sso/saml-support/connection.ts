import { env } from "cloudflare:test";
import { expect } from "vitest";
import type { Deps } from "../../../src/http/deps";
import { samlSettingsFromMetadata } from "../../../src/sso/saml";
import { NO_VERIFICATION, PREFIX, SERVER, service, type TestService } from "../../helpers";
import { idpMetadataXml } from "./idp";

/**
 * An organization with a verified domain and a SAML connection to the test IdP (./idp.ts), as rows in the home
 * database, and the browser's side of a SAML sign-in: `POST /sso/start`, the AuthnRequest it carries, the IdP's form
 * post to the ACS, the bounce to the ACS's GET.
 */

export const APP = "https://app.example.com/after-sso";

export function samlService(overrides: Record<string, unknown> = {}): TestService {
  return service({
    ...NO_VERIFICATION,
    AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: "https://app.example.com",
    ...overrides,
  });
}

export interface SamlOrg {
  orgId: string;
  domain: string;
  connectionId: string;
  spEntityId: string;
  acsUrl: string;
}

export async function samlOrg(options: { allowIdpInitiated?: boolean } = {}): Promise<SamlOrg> {
  const tag = crypto.randomUUID().slice(0, 8);
  const orgId = crypto.randomUUID();
  const connectionId = crypto.randomUUID();
  const domain = `acme-${tag}.test`;
  const now = Date.now();
  // Only metadataXml is given: nothing is fetched, so no Deps are needed.
  const settings = await samlSettingsFromMetadata({} as Deps, { metadataXml: idpMetadataXml() });
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO organizations (id, name, slug, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
    ).bind(orgId, `Acme ${tag}`, `acme-${tag}`, now, now),
    env.DB.prepare(
      "INSERT INTO org_domains (org_id, domain, txt_value, verified_at, created_at) VALUES (?, ?, 'x', ?, ?)",
    ).bind(orgId, domain, now, now),
    env.DB.prepare(
      "INSERT INTO sso_connections (id, org_id, type, settings, allow_idp_initiated, created_at, updated_at) " +
        "VALUES (?, ?, 'saml', ?, ?, ?, ?)",
    ).bind(connectionId, orgId, JSON.stringify(settings), options.allowIdpInitiated ? 1 : 0, now, now),
  ]);
  const base = `${SERVER}${PREFIX}/sso/saml/${connectionId}`;
  return { orgId, domain, connectionId, spEntityId: `${base}/metadata`, acsUrl: `${base}/acs` };
}

/** The cookies a response sets, as a browser sends them back. */
export const cookiesOf = (response: Response) =>
  response.headers
    .getSetCookie()
    .map((line) => line.split(";")[0])
    .join("; ");

export function location(response: Response): URL {
  expect(response.status, `expected a redirect, got ${response.status}`).toBeGreaterThanOrEqual(300);
  expect(response.status).toBeLessThan(400);
  return new URL(response.headers.get("location")!);
}

/** The XML of an HTTP-Redirect binding's `SAMLRequest` (raw DEFLATE, base64). */
export async function authnRequestOf(idpUrl: URL): Promise<string> {
  const bytes = Uint8Array.from(atob(idpUrl.searchParams.get("SAMLRequest")!), (char) => char.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return new Response(stream).text();
}

/** `POST /sso/start` in a fresh browser: the IdP URL, the AuthnRequest's ID and the browser's cookie. */
export async function startSignIn(svc: TestService, email: string, redirectTo = APP) {
  const response = await svc.post("/sso/start", { email, redirectTo });
  expect(response.status, await response.clone().text()).toBe(200);
  const idpUrl = new URL(((await response.json()) as { url: string }).url);
  const requestXml = await authnRequestOf(idpUrl);
  const requestId = /\sID="([^"]+)"/.exec(requestXml)![1]!;
  return { idpUrl, requestXml, requestId, cookie: cookiesOf(response) };
}

/** The IdP's auto-submitted form: a cross-site POST, so the browser sends no SameSite=Lax cookie with it. */
export function postToAcs(svc: TestService, org: SamlOrg, samlResponse: string, relayState?: string) {
  const form = new URLSearchParams({
    SAMLResponse: samlResponse,
    ...(relayState ? { RelayState: relayState } : {}),
  });
  return svc.request("POST", org.acsUrl, {
    body: form.toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
}

/** A browser with `cookie` (none: another browser) following a redirect of the service. */
export const openIn = (svc: TestService, url: URL | string, cookie = "") =>
  svc.request("GET", url.toString(), { headers: cookie ? { cookie } : {} });
