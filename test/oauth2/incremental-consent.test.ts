// Incremental consent (contract §12): a client that comes back with a wider scope is asked about the new scopes only,
// and allowing adds them to what it was allowed before. The MCP step-up loop (RFC 9470 / MCP SEP-835) runs the MCP
// SDK's own `auth()` and WWW-Authenticate parsing against the service, with a small MCP server in the test that
// verifies our tokens with jose and answers 403 `insufficient_scope` naming the scope a tool needs. Threats: consent
// fatigue (a person asked again for everything learns to click Allow without reading), and a wider token obtained
// without the person seeing the new scope.
import {
  auth,
  extractWWWAuthenticateParams,
  type OAuthClientProvider,
} from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { signUp } from "../helpers";
import { allowConsent, authorizeIn, Browser, signIn } from "./page-browser";
import { authorize, ISSUER, location, newClient, provider, REDIRECT_URI, requestIdOf } from "./support";

const MCP = "https://mcp.example.com/mcp";
const RESOURCE_METADATA = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";
const svc = provider({ AUTH_OAUTH2_PROVIDER_REGISTRATION: "open", AUTH_OAUTH2_PROVIDER_RESOURCES: MCP });

describe("incremental consent on the built-in page", () => {
  it("asks a client that comes back wider about the new scopes only; allowing adds them", async () => {
    const client = await newClient(svc);
    const { user } = await signUp(svc);
    const browser = new Browser(svc);
    const first = await requestIdOf(await authorize(svc, client, { scope: "openid email" }));
    await browser.get(`/oauth2/interaction?request_id=${first}`);
    await signIn(browser, first, user.email);
    expect((await allowConsent(browser, first)).searchParams.get("code")).toMatch(/^oac_/);

    const wider = await requestIdOf(await authorize(svc, client, { scope: "openid email profile" }));
    const page = await browser.get(`/oauth2/interaction?request_id=${wider}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    // The question is the difference: the new scope under "now also asks", the earlier ones apart.
    const [asked, before] = html.split("You already allowed it to:");
    expect(asked).toContain("It now also asks to:");
    expect(asked).toContain("See your name, picture and language");
    expect(asked).not.toContain("See your email address");
    expect(before).toContain("See your email address");
    expect(before).toContain("Know who you are");
    expect((await allowConsent(browser, wider)).searchParams.get("code")).toMatch(/^oac_/);

    // Everything allowed now: no page for any subset, and prompt=none completes.
    const again = await requestIdOf(await authorize(svc, client, { scope: "openid profile" }));
    const straight = await browser.get(`/oauth2/interaction?request_id=${again}`);
    expect(straight.status).toBe(303);
    expect(location(straight).searchParams.get("code")).toMatch(/^oac_/);
    const silent = await authorizeIn(browser, client, { scope: "openid email profile", prompt: "none" });
    expect(location(silent).searchParams.get("code")).toMatch(/^oac_/);
  });

  it("threat: a wider scope is never granted silently: prompt=none answers consent_required for it", async () => {
    const client = await newClient(svc);
    const { user } = await signUp(svc);
    const browser = new Browser(svc);
    const first = await requestIdOf(await authorize(svc, client, { scope: "openid" }));
    await browser.get(`/oauth2/interaction?request_id=${first}`);
    await signIn(browser, first, user.email);
    await allowConsent(browser, first);
    const answer = location(await authorizeIn(browser, client, { scope: "openid phone", prompt: "none" }));
    expect(answer.href.startsWith(REDIRECT_URI)).toBe(true);
    expect(answer.searchParams.get("error")).toBe("consent_required");
  });

  it("prompt=consent asks about everything again, as one list", async () => {
    const client = await newClient(svc);
    const { user } = await signUp(svc);
    const browser = new Browser(svc);
    const first = await requestIdOf(await authorize(svc, client, { scope: "openid email" }));
    await browser.get(`/oauth2/interaction?request_id=${first}`);
    await signIn(browser, first, user.email);
    await allowConsent(browser, first);
    const asked = await requestIdOf(
      await authorize(svc, client, { scope: "openid email", prompt: "consent" }),
    );
    const html = await (await browser.get(`/oauth2/interaction?request_id=${asked}`)).text();
    expect(html).toContain("It will be able to:");
    expect(html).toContain("See your email address");
    expect(html).not.toContain("You already allowed it to:");
  });
});

/**
 * A small MCP server: its protected-resource metadata (RFC 9728), and a tool that needs `email`. It verifies every
 * token with jose against the service's keys (issuer, audience = this server, type at+jwt) and answers a token that
 * lacks the scope with 403 `insufficient_scope` and the scope it needs (RFC 6750 §3.1, MCP SEP-835).
 */
async function mcpServer(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.href === RESOURCE_METADATA) {
    return Response.json({
      resource: MCP,
      authorization_servers: [ISSUER],
      scopes_supported: ["openid", "email"],
      bearer_methods_supported: ["header"],
    });
  }
  if (url.href !== MCP) return new Response(null, { status: 404 });
  const challenge = (extra: string) => `Bearer resource_metadata="${RESOURCE_METADATA}"${extra}`;
  const token = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
  if (!token)
    return new Response(null, {
      status: 401,
      headers: { "WWW-Authenticate": challenge(', scope="openid"') },
    });
  const keys = createLocalJWKSet((await (await svc.get("/oauth2/jwks")).json()) as JSONWebKeySet);
  const { payload } = await jwtVerify(token, keys, { issuer: ISSUER, audience: MCP, typ: "at+jwt" });
  if (!String(payload.scope).split(" ").includes("email")) {
    const headers = { "WWW-Authenticate": challenge(', error="insufficient_scope", scope="openid email"') };
    return Response.json({ error: "insufficient_scope" }, { status: 403, headers });
  }
  return Response.json({ tool: "read-email", sub: payload.sub });
}

/** The host's fetch: the MCP server above, or the service through its HTTP surface (answers checked against OpenAPI). */
const fetchFn = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const request = new Request(input, init);
  if (request.url.startsWith("https://mcp.example.com/")) return mcpServer(request);
  const body =
    request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
  return svc.request(request.method, request.url, { headers: Object.fromEntries(request.headers), body });
};

/** An MCP host's memory between the SDK's steps (as in test/compat/mcp.test.ts). */
class HostProvider implements OAuthClientProvider {
  information?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;
  readonly redirectUrl = "http://127.0.0.1:45123/callback";
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Step-up MCP host",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const callTool = (host: HostProvider) =>
  fetchFn(MCP, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(host.saved ? { authorization: `Bearer ${host.saved.access_token}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "read-email" } }),
  });

/** The person's browser: from the host's authorization URL to the page, where `act` does the person's part. */
async function throughThePage(
  browser: Browser,
  host: HostProvider,
  act: (requestId: string, html: string) => Promise<URL>,
) {
  const toPage = await browser.get(host.authorizationUrl!.toString());
  const requestId = await requestIdOf(toPage);
  const page = await browser.get(location(toPage).toString());
  const callback = await act(requestId, await page.text());
  expect(callback.href.startsWith(host.redirectUrl)).toBe(true);
  return callback.searchParams.get("code")!;
}

describe("the MCP step-up loop (MCP SDK auth())", () => {
  it("403 insufficient_scope → the host re-authorizes with the wider scope → the person is asked only for it → the tool call succeeds", async () => {
    const { user } = await signUp(svc);
    const host = new HostProvider();
    // A host registered once (RFC 7591) with every scope it may come to ask for; it asks for the least first.
    const registered = await svc.post("/oauth2/register", { ...host.clientMetadata, scope: "openid email" });
    expect(registered.status).toBe(201);
    host.saveClientInformation((await registered.json()) as OAuthClientInformationMixed);

    const first = extractWWWAuthenticateParams(await callTool(host));
    expect(first.scope).toBe("openid");
    const start = { serverUrl: MCP, resourceMetadataUrl: first.resourceMetadataUrl, fetchFn };
    expect(await auth(host, { ...start, scope: first.scope })).toBe("REDIRECT");
    const browser = new Browser(svc);
    const code = await throughThePage(browser, host, async (requestId) => {
      await signIn(browser, requestId, user.email);
      return allowConsent(browser, requestId);
    });
    expect(await auth(host, { ...start, authorizationCode: code })).toBe("AUTHORIZED");
    expect(host.saved!.scope).toBe("openid");

    const refused = await callTool(host);
    expect(refused.status).toBe(403);
    const needed = extractWWWAuthenticateParams(refused);
    expect(needed).toMatchObject({ error: "insufficient_scope", scope: "openid email" });
    expect(await auth(host, { ...start, scope: needed.scope })).toBe("REDIRECT");
    const widerCode = await throughThePage(browser, host, async (requestId, html) => {
      // Signed in already; the consent screen asks for the email address only, `openid` listed as allowed before.
      const [asked, before] = html.split("You already allowed it to:");
      expect(asked).toContain("See your email address");
      expect(asked).not.toContain("Know who you are");
      expect(before).toContain("Know who you are");
      return allowConsent(browser, requestId);
    });
    expect(await auth(host, { ...start, authorizationCode: widerCode })).toBe("AUTHORIZED");
    expect(host.saved!.scope).toBe("openid email");

    const called = await callTool(host);
    expect(called.status).toBe(200);
    expect(await called.json()).toEqual({ tool: "read-email", sub: user.id });
  });
});
