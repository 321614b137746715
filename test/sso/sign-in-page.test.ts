import { describe, expect, it } from "vitest";
import { uniqueEmail } from "../helpers";
import { Browser } from "../oauth2/page-browser";
import { authorize, location, newClient, requestIdOf } from "../oauth2/support";
import { atIdp, IDP, oidcConnection, orgWithDomain, personAtIdp, ssoService } from "./support";

/**
 * The built-in sign-in page asks for the email first (contract organizations.md §2): an email whose verified domain
 * has a connection goes to that IdP and comes back signed in to the page; any other goes on as before.
 */

const svc = ssoService({ AUTH_OAUTH2_PROVIDER_ENABLED: "true" });

async function pageFor(browser: Browser) {
  const client = await newClient(svc);
  const response = await authorize(svc, client, { scope: "openid email" });
  const requestId = await requestIdOf(response);
  await browser.get(location(response).toString());
  return requestId;
}

describe("the sign-in page and enterprise connections", () => {
  it("sends an email of a connected domain to its IdP and lands signed in to the page", async () => {
    const org = await orgWithDomain(svc);
    await oidcConnection(svc, org);
    const email = `page@${org.domain}`;
    await personAtIdp({ email });
    const browser = new Browser(svc);
    const requestId = await pageFor(browser);

    const routed = await browser.post("/oauth2/interaction/sign-in", { request_id: requestId, email });
    expect(routed.status).toBe(200);
    // Its CSP stays the page's: nothing may run, and the navigation to the IdP is a refresh, not a form's redirect.
    const csp = routed.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain("script-src");
    const html = await routed.text();
    const idpUrl = /content="0;url=([^"]+)"/.exec(html)![1]!.replaceAll("&amp;", "&");
    expect(idpUrl.startsWith(`${IDP}/`)).toBe(true);
    expect(new URL(idpUrl).searchParams.get("login_hint")).toBe(email);

    const back = await browser.get(await atIdp(idpUrl));
    expect(back.status).toBe(302);
    const landing = location(back);
    expect(landing.searchParams.get("refreshToken")).toBeTruthy();
    const landed = await browser.get(landing.toString());
    expect(landed.status).toBe(303);
    expect(browser.signedIn).toBe(true);
  });

  it("goes on as before for an email with no connection", async () => {
    const browser = new Browser(svc);
    const requestId = await pageFor(browser);
    const response = await browser.post("/oauth2/interaction/sign-in", {
      request_id: requestId,
      email: uniqueEmail("plain"),
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('name="password"');
  });
});
