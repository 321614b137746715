// A remembered consent covers the RFC 8707 resources the person allowed, not only the scopes (contract §12, RFC 8707
// §2.1). The consent page lists where the tokens go ("It asks for access to: …"), so that list is part of what was
// allowed. Threat: a client the person allowed once for its own sign-in (no `resource`) comes back naming another API
// of the deployment (the storage API, an MCP server) and is handed a code straight away, with no page, or silently
// under `prompt=none`: its access token then reaches an API the person never saw named. A consent remembered before
// resources were (migration 0048) must not cover one either, yet keeps covering the requests it always covered.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { WireClient } from "../../src/oauth2/clients";
import { decodeJwt, SERVER, signUp } from "../helpers";
import { userD1 } from "../support/shards";
import { allowConsent, authorizeIn, Browser, signIn } from "./page-browser";
import {
  type AuthorizeParams,
  authorize,
  exchange,
  location,
  newClient,
  provider,
  REDIRECT_URI,
  requestIdOf,
  type TokenAnswer,
} from "./support";

const MCP = "https://mcp.example.com/mcp";
const API = "https://api.example.com";
const svc = provider({ AUTH_OAUTH2_PROVIDER_RESOURCES: `${MCP},${API}` });

/** A person signed in to the page for `client` (the first request's consent page left unanswered). */
async function signedIn(client: WireClient) {
  const { user } = await signUp(svc);
  const browser = new Browser(svc);
  const first = await requestIdOf(await authorize(svc, client, { scope: "openid" }));
  await browser.get(`/oauth2/interaction?request_id=${first}`);
  const page = await signIn(browser, first, user.email);
  expect(page.status).toBe(200);
  return { user, browser, first };
}

/** The access token's `aud` for the code in `callback`. */
async function audienceOf(client: WireClient, callback: URL) {
  const code = callback.searchParams.get("code");
  expect(code, callback.href).toMatch(/^oac_/);
  const response = await exchange(svc, client, code!);
  expect(response.status).toBe(200);
  return decodeJwt(((await response.json()) as TokenAnswer).access_token).payload.aud;
}

/** The error `prompt=none` sent the client back with, or null when it got a code. */
async function silently(browser: Browser, client: WireClient, params: AuthorizeParams) {
  const callback = location(
    await authorizeIn(browser, client, { scope: "openid", prompt: "none", ...params }),
  );
  expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
  return callback.searchParams.get("error") ?? (callback.searchParams.get("code") ? null : "no code");
}

describe("a remembered consent and the resources (RFC 8707)", () => {
  it("threat: a consent given without a resource is asked again for one, and prompt=none answers consent_required", async () => {
    const client = await newClient(svc);
    const { browser, first } = await signedIn(client);
    expect(await audienceOf(client, await allowConsent(browser, first))).toBe(client.clientId);

    // Before the fix: a 303 with a code here, and a token for the API the person was never shown.
    const wider = await requestIdOf(await authorize(svc, client, { scope: "openid", resource: API }));
    const page = await browser.get(`/oauth2/interaction?request_id=${wider}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("It asks for access to:");
    expect(html).toContain("<li><strong>api.example.com</strong></li>");
    expect(await silently(browser, client, { resource: API })).toBe("consent_required");

    // Allowed on the page: remembered with the scopes, so the same request needs no page and no question again.
    expect(await audienceOf(client, await allowConsent(browser, wider))).toBe(API);
    const again = await requestIdOf(await authorize(svc, client, { scope: "openid", resource: API }));
    const straight = await browser.get(`/oauth2/interaction?request_id=${again}`);
    expect(straight.status).toBe(303);
    expect(await audienceOf(client, location(straight))).toBe(API);
    expect(await silently(browser, client, { resource: API })).toBeNull();
    expect(await silently(browser, client, {})).toBeNull();
    // The other resource was never shown to the person: still asked about.
    expect(await silently(browser, client, { resource: MCP })).toBe("consent_required");

    // The console's list of the client's consents names the resources beside the scopes.
    const login = await svc.request("POST", "/admin/console/login", {
      body: new URLSearchParams({ secret: String(env.AUTH_ADMIN_SECRET) }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(SERVER).origin },
    });
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const clientPage = await svc.request("GET", `/admin/console/clients/${client.clientId}`, {
      headers: { cookie },
    });
    expect(clientPage.status).toBe(200);
    const listed = await clientPage.text();
    expect(listed).toContain("<th>Scopes allowed</th><th>Resources allowed</th>");
    expect(listed).toContain(`<td>openid</td><td>${API}</td>`);
  });

  it("a consent given for a resource covers a request naming none: its token is for the client itself", async () => {
    const client = await newClient(svc);
    const { browser } = await signedIn(client);
    const withMcp = await requestIdOf(await authorize(svc, client, { scope: "openid", resource: MCP }));
    expect(await (await browser.get(`/oauth2/interaction?request_id=${withMcp}`)).text()).toContain(
      "mcp.example.com",
    );
    expect(await audienceOf(client, await allowConsent(browser, withMcp))).toBe(MCP);
    const plain = location(await authorizeIn(browser, client, { scope: "openid", prompt: "none" }));
    expect(await audienceOf(client, plain)).toBe(client.clientId);
  });

  it("threat: a consent remembered before resources were covers a request naming none, never a resource", async () => {
    const client = await newClient(svc);
    const { user, browser } = await signedIn(client);
    // A row as migration 0047's table held it: scopes only, the column's default fills in the rest.
    await userD1(user.id)
      .prepare("INSERT INTO oauth2_consents (user_id, client_id, scopes, granted_at) VALUES (?, ?, ?, ?)")
      .bind(user.id, client.clientId, JSON.stringify(["openid", "email"]), Date.now())
      .run();
    expect(await silently(browser, client, { scope: "openid email" })).toBeNull();
    expect(await silently(browser, client, { resource: API })).toBe("consent_required");
    const asked = await requestIdOf(await authorize(svc, client, { scope: "openid", resource: API }));
    expect((await browser.get(`/oauth2/interaction?request_id=${asked}`)).status).toBe(200);
  });

  it("an external login UI reads the resources to ask about; its completion binds the token to them", async () => {
    const client = await newClient(svc);
    const session = await signUp(svc);
    const requestId = await requestIdOf(await authorize(svc, client, { scope: "openid", resource: API }));
    const described = (await (await svc.get(`/oauth2/login?request_id=${requestId}`)).json()) as {
      resources?: string[];
    };
    expect(described.resources).toEqual([API]);
    const done = await svc.post("/oauth2/login", { requestId }, session.accessToken);
    expect(done.status).toBe(200);
    const callback = new URL(((await done.json()) as { redirectUri: string }).redirectUri);
    expect(await audienceOf(client, callback)).toBe(API);
  });
});
