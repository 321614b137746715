// An MCP host as the MCP TypeScript SDK's `auth()` drives it (contract §3.6), written once for the MCP files
// (mcp.test.ts, mcp-orgs.test.ts): the host's memory between the SDK's steps, the loop from the first `auth()` (a
// redirect) through the person's approval to the second (the code exchanged), and a tool call with the tokens.
import { auth, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { expect, inject } from "vitest";

export const mcpServer = inject("mcpServer");

/** An MCP host's memory: what the SDK asks it to keep between the steps. */
export class HostProvider implements OAuthClientProvider {
  information?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;
  readonly redirectUrl: string;
  constructor(
    readonly clientName: string,
    readonly clientMetadataUrl?: string,
  ) {
    // The host listens on a loopback port of its choosing; the person's browser comes back there.
    this.redirectUrl = `http://127.0.0.1:${40_000 + Math.floor(Math.random() * 20_000)}/callback`;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.clientName,
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
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

/**
 * The whole of `auth()`: the first call redirects, `approve` is the person's part (the authorization URL to the
 * host's callback), and the callback's code finishes it.
 */
export async function connect(host: HostProvider, approve: (authorizationUrl: URL) => Promise<URL>) {
  expect(await auth(host, { serverUrl: mcpServer })).toBe("REDIRECT");
  const callback = await approve(host.authorizationUrl!);
  expect(callback.toString().startsWith(host.redirectUrl)).toBe(true);
  const code = callback.searchParams.get("code")!;
  expect(await auth(host, { serverUrl: mcpServer, authorizationCode: code })).toBe("AUTHORIZED");
  return host.saved!;
}

/** The example MCP server's `whoami` tool, called with the host's tokens. */
export async function whoami(host: HostProvider) {
  const client = new Client({ name: "compat-host", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpServer), { authProvider: host }));
  try {
    const result = await client.callTool({ name: "whoami" });
    const [content] = result.content as { type: string; text: string }[];
    return JSON.parse(content!.text) as { sub: string; client_id: string; scope: string };
  } finally {
    await client.close();
  }
}
