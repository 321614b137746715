/**
 * An MCP server on Cloudflare Workers that trusts the auth service for its access tokens (docs/mcp.md).
 *
 * What makes an MCP host (Claude, an IDE, the MCP SDK's `auth()`) find its way here and back:
 * 1. `GET /.well-known/oauth-protected-resource/mcp` (RFC 9728): this server's resource identifier and the
 *    authorization server that issues tokens for it.
 * 2. A request without a valid token gets 401 with `WWW-Authenticate: Bearer resource_metadata="…"`, pointing at (1).
 * 3. The host discovers the auth service, registers (or names its client metadata document), sends the person
 *    through sign-in and consent, and asks for a token with `resource=<this server>` (RFC 8707).
 * 4. Every request's token is verified here with jose against the auth service's JWKS: signature, `iss`, `aud` (this
 *    server, so a token meant for another API is refused), `exp`, type `at+jwt`, and the scope this server needs.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { createRemoteJWKSet, errors, type JWKSCacheInput, type JWTPayload, jwksCache, jwtVerify } from "jose";

interface Env {
  /** The auth service's issuer, e.g. https://auth.example.com/auth/v1. */
  AUTH_ISSUER: string;
  /** This server's resource identifier; empty: `<origin>/mcp`. */
  MCP_RESOURCE?: string;
}

/** What a token must allow for this server to answer: knowing who the person is. */
const REQUIRED_SCOPE = "openid";
const MCP_PATH = "/mcp";

/**
 * The auth service's keys, kept across requests as settled data only: jose fills this object after a fetch completes,
 * and each request builds its own key set around it. (A key set object shared by requests would share its pending
 * fetch, which Workers forbid: one request may not wait on another's I/O.) An unknown key id refetches, at most every
 * 30 seconds, so a key rotation at the auth service is picked up at once.
 */
const keyCache: JWKSCacheInput = {};

function resourceOf(env: Env, url: URL): string {
  return env.MCP_RESOURCE || `${url.origin}${MCP_PATH}`;
}

/** RFC 9728 §3.1: the metadata of resource `https://host/mcp` is at `https://host/.well-known/oauth-protected-resource/mcp`. */
function metadataUrlOf(resource: string): string {
  const { origin, pathname } = new URL(resource);
  return `${origin}/.well-known/oauth-protected-resource${pathname === "/" ? "" : pathname}`;
}

function protectedResourceMetadata(env: Env, resource: string) {
  return {
    resource,
    authorization_servers: [env.AUTH_ISSUER],
    bearer_methods_supported: ["header"],
    scopes_supported: ["openid", "profile", "email", "offline_access"],
    resource_name: "Example MCP server",
  };
}

/** RFC 6750 §3 with RFC 9728 §5.1: where to learn how to get a token, and what went wrong with this one. */
function challenge(resource: string, status: 401 | 403, error?: string, description?: string): Response {
  const parts = [`resource_metadata="${metadataUrlOf(resource)}"`];
  if (error) parts.push(`error="${error}"`);
  if (description) parts.push(`error_description="${description.replace(/["\\]/g, "")}"`);
  if (status === 403) parts.push(`scope="${REQUIRED_SCOPE}"`);
  return Response.json(
    { error: error ?? "unauthorized", error_description: description ?? "an access token is required" },
    { status, headers: { "WWW-Authenticate": `Bearer ${parts.join(", ")}` } },
  );
}

/** The token's claims when the auth service issued it for this server and it is still valid; else the reason. */
async function verify(env: Env, token: string, resource: string): Promise<JWTPayload | string> {
  const keys = createRemoteJWKSet(new URL(`${env.AUTH_ISSUER}/oauth2/jwks`), { [jwksCache]: keyCache });
  try {
    const { payload } = await jwtVerify(token, keys, {
      issuer: env.AUTH_ISSUER,
      audience: resource,
      typ: "at+jwt",
      algorithms: ["RS256", "ES256", "EdDSA"],
      requiredClaims: ["sub", "exp", "client_id"],
    });
    return payload;
  } catch (error) {
    if (error instanceof errors.JWTClaimValidationFailed && error.claim === "aud") {
      return "the token is for another resource";
    }
    if (error instanceof errors.JWTExpired) return "the token has expired";
    return "the token is invalid";
  }
}

/** A fresh MCP server for one request (stateless): one tool that tells who the token speaks for. */
function mcpServer(claims: JWTPayload) {
  const server = new McpServer(
    { name: "example-mcp-server", version: "1.0.0" },
    { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  server.registerTool(
    "whoami",
    { description: "Who the access token speaks for, and what it allows" },
    async () => ({
      content: [
        {
          type: "text",
          text: JSON.stringify({ sub: claims.sub, client_id: claims.client_id, scope: claims.scope }),
        },
      ],
    }),
  );
  return server;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const resource = resourceOf(env, url);
    if (
      url.pathname === new URL(metadataUrlOf(resource)).pathname ||
      url.pathname === "/.well-known/oauth-protected-resource"
    ) {
      return Response.json(protectedResourceMetadata(env, resource), {
        headers: { "Access-Control-Allow-Origin": "*", "Cache-Control": "public, max-age=300" },
      });
    }
    if (url.pathname !== MCP_PATH) return new Response("not found", { status: 404 });

    const token = /^Bearer\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1];
    if (!token) return challenge(resource, 401);
    const claims = await verify(env, token, resource);
    if (typeof claims === "string") return challenge(resource, 401, "invalid_token", claims);
    const scopes = typeof claims.scope === "string" ? claims.scope.split(" ") : [];
    if (!scopes.includes(REQUIRED_SCOPE)) {
      return challenge(resource, 403, "insufficient_scope", `this server needs the ${REQUIRED_SCOPE} scope`);
    }

    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await mcpServer(claims).connect(transport);
    return transport.handleRequest(request, {
      authInfo: {
        token,
        clientId: String(claims.client_id),
        scopes,
        expiresAt: claims.exp,
        resource: new URL(resource),
      },
    });
  },
} satisfies ExportedHandler<Env>;
