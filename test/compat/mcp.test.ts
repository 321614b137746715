// An MCP host meeting the service for the first time, as the MCP TypeScript SDK's `auth()` does it (contract §3.6),
// against `wrangler dev` and the example MCP server (examples/mcp-server): protected-resource metadata, the
// authorization server's metadata at the path-inserted URL, dynamic registration or a client ID metadata document,
// the person's sign-in and consent, a token bound to the MCP server (RFC 8707), and a tool call with it. Threat
// covered: audience confusion, a token the service issued for another API replayed at the MCP server.
import { decodeJwt } from "jose";
import { describe, expect, inject, it } from "vitest";
import { authUrl, verifiedUser } from "./client";
import { connect as connectWith, HostProvider, mcpServer, whoami } from "./mcp-host";
import { completeLoginStep, pendingRequestOf } from "./relying-party";

const otherResource = inject("otherResource");
const clientDocs = inject("clientDocs");

/**
 * The person's part: the authorization URL leads to the login step, which they complete signed in (the JSON login
 * step here; the device test does it in Chromium on the built-in page); the browser lands on the host's callback.
 */
async function personApproves(authorizationUrl: URL, accessToken: string): Promise<URL> {
  return completeLoginStep(await pendingRequestOf(authorizationUrl), accessToken);
}

/** The SDK's loop (mcp-host.ts) with the person approving. */
const connect = (host: HostProvider, accessToken: string) =>
  connectWith(host, (url) => personApproves(url, accessToken));

describe("the MCP SDK's auth() against the service and the example MCP server", () => {
  it("registers itself (RFC 7591), gets a token bound to the MCP server, and calls a tool with it", async () => {
    const person = await verifiedUser("mcp-dcr");
    const host = new HostProvider("Compat MCP host");
    const tokens = await connect(host, person.accessToken);
    // It registered: a client id this server issued, no secret (a public client).
    expect(host.information?.client_id).toMatch(/^oc_/);
    expect((host.information as { client_secret?: string }).client_secret).toBeUndefined();
    const claims = decodeJwt(tokens.access_token);
    expect(claims.aud).toBe(mcpServer);
    expect(claims.iss).toBe(authUrl);
    expect(tokens.refresh_token).toMatch(/^ort_/);
    const me = await whoami(host);
    expect(me).toMatchObject({
      sub: decodeJwt(person.accessToken).sub,
      client_id: host.information!.client_id,
    });
  });

  it("names a client ID metadata document instead of registering, and the service fetches it over https", async () => {
    const person = await verifiedUser("mcp-cimd");
    const path = `/hosts/${crypto.randomUUID()}.json`;
    const documentUrl = `${clientDocs.origin}${path}`;
    const host = new HostProvider("Compat MCP host (document)", documentUrl);
    await fetch(`${clientDocs.control}${path}`, {
      method: "PUT",
      body: JSON.stringify({ client_id: documentUrl, ...host.clientMetadata }),
    });
    const tokens = await connect(host, person.accessToken);
    expect(host.information?.client_id).toBe(documentUrl);
    expect(host.authorizationUrl!.searchParams.get("client_id")).toBe(documentUrl);
    expect(await (await fetch(`${clientDocs.control}${path}`)).json()).toBeGreaterThanOrEqual(1);
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: mcpServer, client_id: documentUrl });
    expect(await whoami(host)).toMatchObject({ client_id: documentUrl });
  });

  it("the MCP server refuses a token the service issued for another resource, and says where to get one", async () => {
    const person = await verifiedUser("mcp-other");
    const host = new HostProvider("Compat MCP host (other API)");
    await connect(host, person.accessToken);
    // The same client and person, but a token for another API: the authorization request with that resource.
    const verifier = "v".repeat(43);
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
    const challenge = Buffer.from(digest).toString("base64url");
    const request = new URL(host.authorizationUrl!);
    request.searchParams.set("resource", otherResource);
    request.searchParams.set("code_challenge", challenge);
    const callback = await personApproves(request, person.accessToken);
    const exchanged = await fetch(`${authUrl}/oauth2/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: callback.searchParams.get("code")!,
        redirect_uri: host.redirectUrl,
        client_id: host.information!.client_id,
        code_verifier: verifier,
      }),
    });
    expect(exchanged.status).toBe(200);
    const forOther = ((await exchanged.json()) as { access_token: string }).access_token;
    expect(decodeJwt(forOther).aud).toBe(otherResource);

    const refused = await fetch(mcpServer, {
      method: "POST",
      headers: {
        authorization: `Bearer ${forOther}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(refused.status).toBe(401);
    const challengeHeader = refused.headers.get("www-authenticate")!;
    expect(challengeHeader).toContain('error="invalid_token"');
    expect(challengeHeader).toContain("for another resource");
    expect(challengeHeader).toContain(
      `resource_metadata="${new URL(mcpServer).origin}/.well-known/oauth-protected-resource/mcp"`,
    );
    // No token at all: the same pointer, which is where an MCP host starts.
    const anonymous = await fetch(mcpServer, { method: "POST", body: "{}" });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toContain("resource_metadata=");
  });
});
