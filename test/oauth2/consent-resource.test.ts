// What the consent screen says about a request (contract §13, "tried as a new user would"): the RFC 8707 resource the
// tokens are for (an MCP server), so a person knows what they let the client reach; and the client's logo only when
// an admin made the client. Threats: a person allowing access without seeing where it goes; a self-registered client
// dressing up as a known brand with that brand's logo (its name is already marked unchecked; a logo would outweigh
// that); a logo URL that lets the page load images from anywhere (only that origin, only on that page).
import { describe, expect, it } from "vitest";
import type { WireClient } from "../../src/oauth2/clients";
import { expectError, signUp, type TestService } from "../helpers";
import { Browser, signIn } from "./page-browser";
import { location, newClient, provider, REDIRECT_URI, requestIdOf } from "./support";

const MCP = "https://mcp.example.com/mcp";
const API = "https://api.example.com";
const LOGO = "https://logos.example.net/notes.png";
const svc = provider({
  AUTH_OAUTH2_PROVIDER_RESOURCES: `${MCP},${API}`,
  AUTH_OAUTH2_PROVIDER_REGISTRATION: "open",
});

/** The consent page of a code-flow request for `resources`, for a newly signed-up person. */
async function consentFor(on: TestService, clientId: string, resources: string[]) {
  const params = new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    response_type: "code",
    scope: "openid email",
    state: "s",
    code_challenge: "x".repeat(43),
    code_challenge_method: "S256",
  });
  for (const resource of resources) params.append("resource", resource);
  const authorized = await on.request("GET", `/oauth2/authorize?${params}`);
  const requestId = await requestIdOf(authorized);
  const browser = new Browser(on);
  await browser.get(location(authorized).toString());
  const { user } = await signUp(on);
  const page = await signIn(browser, requestId, user.email);
  expect(page.status).toBe(200);
  return { html: await page.text(), csp: page.headers.get("content-security-policy") ?? "" };
}

describe("the consent screen", () => {
  it("names the resource the tokens are for: its host, and the whole URL when it has a path", async () => {
    const client = await newClient(svc);
    const { html } = await consentFor(svc, client.clientId, [MCP, API]);
    expect(html).toContain("It asks for access to:");
    expect(html).toContain(
      '<li><strong>mcp.example.com</strong><br><span class="url">https://mcp.example.com/mcp</span></li>',
    );
    // An origin alone says nothing more than its host.
    expect(html).toContain("<li><strong>api.example.com</strong></li>");
  });

  it("says nothing of resources when the request names none", async () => {
    const client = await newClient(svc);
    const { html } = await consentFor(svc, client.clientId, []);
    expect(html).not.toContain("It asks for access to:");
  });

  it("speaks the person's language about it", async () => {
    const client = await newClient(svc);
    const params = new URLSearchParams({
      client_id: client.clientId,
      redirect_uri: REDIRECT_URI,
      response_type: "code",
      scope: "openid",
      state: "s",
      resource: MCP,
      ui_locales: "de",
    });
    const authorized = await svc.request("GET", `/oauth2/authorize?${params}`);
    const requestId = await requestIdOf(authorized);
    const { user } = await signUp(svc);
    const page = await (await signIn(new Browser(svc), requestId, user.email)).text();
    expect(page).toContain('<html lang="de">');
    expect(page).toContain("Sie bittet um Zugriff auf:");
    expect(page).toContain("mcp.example.com");
  });

  it("shows the logo of a client an admin made, and allows that image origin on that page only", async () => {
    const client = await newClient(svc, { logoUri: LOGO });
    expect(client.logoUri).toBe(LOGO);
    const { html, csp } = await consentFor(svc, client.clientId, [MCP]);
    expect(html).toContain(`<img class="client-logo" src="${LOGO}" alt="" referrerpolicy="no-referrer">`);
    expect(csp).toContain("img-src https://logos.example.net");
    // The sign-in page before it has no image to show: no img-src at all.
    const authorized = await svc.request(
      "GET",
      `/oauth2/authorize?${new URLSearchParams({ client_id: client.clientId, redirect_uri: REDIRECT_URI, response_type: "code", scope: "openid", state: "s" })}`,
    );
    const signInPage = await new Browser(svc).get(location(authorized).toString());
    expect(signInPage.headers.get("content-security-policy")).not.toContain("img-src");
  });

  it("never shows the logo of a client that registered itself", async () => {
    const registered = await svc.post("/oauth2/register", {
      client_name: "Totally The Bank",
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: "none",
      logo_uri: LOGO,
    });
    expect(registered.status).toBe(201);
    const { client_id: clientId, logo_uri } = (await registered.json()) as {
      client_id: string;
      logo_uri: string;
    };
    expect(logo_uri).toBe(LOGO);
    const { html, csp } = await consentFor(svc, clientId, [MCP]);
    expect(html).toContain("Totally The Bank");
    expect(html).toContain("mcp.example.com");
    expect(html).not.toContain(LOGO);
    expect(html).not.toContain("<img");
    expect(csp).not.toContain("logos.example.net");
  });

  it("the admin API takes only an https logo", async () => {
    for (const logoUri of [
      "http://logos.example.net/x.png",
      "javascript:alert(1)",
      "data:image/png;base64,AA",
    ]) {
      const response = await svc.request("POST", "/admin/oauth2/clients", {
        headers: { "x-hasura-admin-secret": String((svc.env as Record<string, unknown>).AUTH_ADMIN_SECRET) },
        json: { clientName: "Bad Logo", redirectUris: [REDIRECT_URI], logoUri },
      });
      await expectError(response, 400, "invalid-request");
    }
    const cleared = (await newClient(svc, { logoUri: null })) as WireClient;
    expect(cleared.logoUri).toBeNull();
  });
});
