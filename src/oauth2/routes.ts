import { type Context, Hono } from "hono";
import { cors } from "hono/cors";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import type { Config } from "../config";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { requireAuth } from "../http/auth";
import { operation, REDIRECT_ANSWER } from "../http/documented";
import { jwksSchema } from "../http/system-routes";
import { jsonBody } from "../http/validation";
import { getKeySet } from "../lib/keys";
import { LOGIN_PAGE_PATH } from "../lib/redirect";
import { rateLimit } from "../rate-limits/middleware";
import { AuthorizeRedirect, parseAuthorizationRequest } from "./authorize";
import { scopeClaims } from "./claims";
import { authenticateClient } from "./client-auth";
import { GRANT_TYPES } from "./client-schema";
import { DEVICE_PAGE_PATH, startDeviceAuthorization } from "./device";
import { discoveryDocument } from "./discovery";
import { OAuth2Error } from "./errors";
import { findLiveGrant } from "./grants";
import { introspect, revoke } from "./introspection";
import { completeWithAccessToken, describeRequest } from "./login";
import { devicePageRoutes } from "./page/device";
import { interactionRoutes, silentAuthorization } from "./page/routes";
import { oauth2Params, param } from "./params";
import { savePendingRequest } from "./pending-requests";
import { errorResponse } from "./redirects";
import { registrationRoutes } from "./registration-routes";
import { tokenRequest } from "./token-endpoint";
import { isForClient, verifyOAuth2AccessToken } from "./tokens";
import {
  deviceAuthorizationSchema,
  discoverySchema,
  introspectionSchema,
  OAUTH2_ERRORS,
  oauth2ErrorSchema,
  tokenAnswerSchema,
  userinfoSchema,
} from "./wire";

type Ctx = Context<AppEnv>;

/** Off unless `AUTH_OAUTH2_PROVIDER_ENABLED` (contract §3.5): then every path answers as a disabled feature does. */
const requireEnabled = createMiddleware<AppEnv>(async (c, next) => {
  if (!c.var.config.AUTH_OAUTH2_PROVIDER_ENABLED) {
    throw new AppError("disabled-endpoint", "the OAuth2 authorization server is disabled");
  }
  await next();
});

/** Token answers are never stored by a cache or the browser (RFC 6749 §5.1). */
const noStore = { "Cache-Control": "no-store", Pragma: "no-cache" };

async function authorize(c: Ctx) {
  const deps = c.var.deps;
  try {
    const { request } = await parseAuthorizationRequest(deps, await oauth2Params(c));
    const loginUrl = deps.config.AUTH_OAUTH2_PROVIDER_LOGIN_URL;
    if (request.prompt.includes("none")) {
      // An external login UI keeps its own session, which this server cannot see.
      const location = loginUrl
        ? errorResponse(
            deps.config,
            request.redirectUri,
            "login_required",
            "prompt=none needs the built-in login page",
            request.state,
          )
        : await silentAuthorization(c, request);
      return c.redirect(location, 302);
    }
    await savePendingRequest(c.env, request);
    const ui = new URL(loginUrl ?? `${deps.config.AUTH_SERVER_URL}${LOGIN_PAGE_PATH}`);
    ui.searchParams.set("request_id", request.id);
    return c.redirect(ui.toString(), 302);
  } catch (error) {
    if (error instanceof AuthorizeRedirect) return c.redirect(error.location, 302);
    throw error;
  }
}

/** A bearer OAuth2 access token whose grant stands (userinfo), or 401 `invalid_token`. */
async function bearerGrant(c: Ctx) {
  const match = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "");
  const invalid = new OAuth2Error("invalid_token", "the access token is invalid, expired or revoked");
  const payload = match?.[1] ? await verifyOAuth2AccessToken(c.var.config, match[1]) : null;
  // Userinfo serves the client about its user: a token bound to another resource (RFC 8707) or about no user
  // (client_credentials) is not one for it.
  if (!payload?.grant_id || !isForClient(payload)) throw invalid;
  const live = await findLiveGrant(c.var.deps, payload.grant_id);
  if (!live || live.grant.clientId !== payload.client_id || live.user.id !== payload.sub) throw invalid;
  return { payload, user: live.user };
}

async function userinfo(c: Ctx) {
  const { payload, user } = await bearerGrant(c);
  const scopes = payload.scope.split(" ");
  if (!scopes.includes("openid"))
    throw new OAuth2Error("insufficient_scope", "userinfo needs the openid scope");
  return c.json({ sub: user.id, ...scopeClaims(user, scopes) }, 200, noStore);
}

/** The client-authenticated endpoints: token, introspection and revocation take the form and the client. */
async function clientRequest(c: Ctx) {
  const params = await oauth2Params(c);
  const client = await authenticateClient(c.var.deps, c.req.header("authorization"), params);
  return { params, client };
}

function requiredToken(params: Map<string, string>): string {
  const token = param(params, "token", 8192);
  if (!token) throw new OAuth2Error("invalid_request", "token is required");
  return token;
}

const loginBody = z.object({ requestId: z.string().min(1).max(100) });

const discovery = async (c: Ctx) =>
  c.json(await discoveryDocument(c.var.config), 200, { "Cache-Control": "public, max-age=300" });

/**
 * The discovery document at the host's root under the path-inserted names of RFC 8414 §3.1
 * (`/.well-known/oauth-authorization-server/auth/v1` for the issuer `…/auth/v1`): the first place the MCP SDK and
 * other RFC 8414 clients look. Mounted on the whole app; nothing when the issuer has no path (the issuer's own
 * well-known URLs are then the same).
 */
export function rootMetadataRoutes(config: Config) {
  const routes = new Hono<AppEnv>();
  const issuerPath = new URL(config.AUTH_SERVER_URL).pathname.replace(/\/$/, "");
  if (!issuerPath) return routes;
  for (const name of ["oauth-authorization-server", "openid-configuration"]) {
    const path = `/.well-known/${name}${issuerPath}`;
    routes.use(path, cors({ origin: "*" }), requireEnabled).get(path, discovery);
  }
  return routes;
}

/** The parameters of the requests the server parses itself (params.ts), for the document. */
const authorizeQuery = z.object({
  client_id: z.string().describe("A registered client id, or the URL of a client ID metadata document"),
  redirect_uri: z.string().describe("One of the client's, exactly (native loopback URIs: any port)"),
  response_type: z.literal("code"),
  scope: z.string().optional().describe("openid profile email phone offline_access graphql"),
  state: z.string().optional(),
  nonce: z.string().optional(),
  code_challenge: z.string().optional().describe("PKCE S256; required of public clients"),
  code_challenge_method: z.literal("S256").optional(),
  resource: z.string().optional().describe("RFC 8707, repeatable: the API the tokens are for"),
  prompt: z.string().optional().describe("none, login, consent, select_account"),
  max_age: z.string().optional(),
  login_hint: z.string().optional(),
});
const clientCredentials = {
  client_id: z.string().optional().describe("Public clients, and client_secret_post"),
  client_secret: z.string().optional().describe("client_secret_post; else HTTP Basic"),
};
const tokenForm = z.object({
  grant_type: z.enum(GRANT_TYPES),
  code: z.string().optional(),
  redirect_uri: z.string().optional(),
  code_verifier: z.string().optional(),
  refresh_token: z.string().optional(),
  device_code: z.string().optional(),
  scope: z.string().optional().describe("Refresh and client_credentials: narrows"),
  resource: z.string().optional().describe("RFC 8707, repeatable: narrows"),
  ...clientCredentials,
});
const tokenForm2 = z.object({
  token: z.string(),
  token_type_hint: z.enum(["access_token", "refresh_token"]).optional(),
  ...clientCredentials,
});

const AUTHORIZE_DOC = operation({
  summary: "Authorization request",
  description:
    "Starts the code flow (PKCE): a checked request goes to the login page (the built-in one, or " +
    "`AUTH_OAUTH2_PROVIDER_LOGIN_URL`) with `request_id`, and from there back to the client's `redirect_uri` with " +
    "`code`, `state` and `iss`. An unknown client (401 `invalid_client`) or a redirect URI it did not register (400 " +
    "`invalid_request`) is a JSON error, never a redirect; every later failure goes back to the client as `error`. " +
    "`prompt=none` never shows a page.",
  request: { target: "query", schema: authorizeQuery },
  answers: {
    302: REDIRECT_ANSWER("To the login page, or back to the client with `code` or `error`."),
    ...OAUTH2_ERRORS,
  },
});

const USERINFO_DOC = operation({
  summary: "UserInfo",
  description:
    "The claims of the token's user that its scopes allow (`openid` required: 403 `insufficient_scope`). Only " +
    "tokens issued for the client itself (no resource) and whose grant stands.",
  security: "oauth2-token",
  answers: {
    200: { description: "The claims.", schema: userinfoSchema },
    ...OAUTH2_ERRORS,
    403: { description: "`insufficient_scope`.", schema: oauth2ErrorSchema },
  },
});

const DISCOVERY_DOC = operation({
  summary: "Discovery document",
  description:
    "OpenID Connect Discovery and RFC 8414 metadata: every endpoint, grant and flag of the server; also at the " +
    "host's root under the path-inserted names (`/.well-known/oauth-authorization-server{issuer path}`).",
  answers: { 200: { description: "The server's metadata.", schema: discoverySchema } },
});

/** The authorization server (contract §3.5, §3.6), mounted on the auth API. */
export function oauth2Routes(loginUrl: string | undefined) {
  const routes = new Hono<AppEnv>()
    .use("/.well-known/openid-configuration", requireEnabled)
    .use("/.well-known/oauth-authorization-server", requireEnabled)
    .use("/oauth2/*", requireEnabled)
    .get("/.well-known/openid-configuration", DISCOVERY_DOC, discovery)
    .get("/.well-known/oauth-authorization-server", DISCOVERY_DOC, discovery)
    .get(
      "/oauth2/jwks",
      operation({
        summary: "Signing keys of the authorization server",
        description: "The same key set as `/.well-known/jwks.json`: ID and access tokens verify with it.",
        answers: { 200: { description: "The key set.", schema: jwksSchema } },
      }),
      async (c) => {
        // The same key set as /.well-known/jwks.json, so a rotation shows in both at once.
        const { jwks } = await getKeySet(c.var.config);
        return c.json({ keys: jwks }, 200, { "Cache-Control": "public, max-age=300" });
      },
    )
    .get("/oauth2/authorize", AUTHORIZE_DOC, authorize)
    .post("/oauth2/authorize", AUTHORIZE_DOC, authorize)
    .get(
      "/oauth2/login",
      operation({
        summary: "Read a pending authorization request",
        description:
          "For an external login UI (`AUTH_OAUTH2_PROVIDER_LOGIN_URL`): what the request it was sent with asks, to " +
          "show the person (a device flow's request also has `deviceUserCode`). Unknown or expired: 400 " +
          "`invalid-request`.",
        request: { target: "query", schema: z.object({ request_id: z.string() }) },
        answers: {
          200: {
            description: "The request.",
            schema: z.object({
              requestId: z.string(),
              clientId: z.string(),
              clientName: z.string(),
              scopes: z.array(z.string()),
              redirectUri: z.string(),
              deviceUserCode: z.string().optional(),
            }),
          },
        },
      }),
      async (c) => c.json(await describeRequest(c.var.deps, c.req.query("request_id") ?? "")),
    )
    .post(
      "/oauth2/login",
      operation({
        summary: "Complete a pending authorization request",
        description:
          "The external login UI, having signed the person in and asked for consent, completes the request with the " +
          "person's access token; it then sends the browser to `redirectUri` (the client's, with `code`).",
        security: "bearer",
        answers: {
          200: { description: "Where the browser goes.", schema: z.object({ redirectUri: z.string() }) },
        },
      }),
      requireAuth,
      jsonBody(loginBody),
      async (c) =>
        c.json(await completeWithAccessToken(c.var.deps, c.req.valid("json").requestId, c.var.auth!)),
    )
    .post(
      "/oauth2/token",
      operation({
        summary: "Token endpoint",
        description:
          "*form*. `authorization_code` (with the PKCE verifier and the same redirect URI; a replayed code revokes " +
          "what it issued), `refresh_token` (rotates; a replay revokes the grant), " +
          "`urn:ietf:params:oauth:grant-type:device_code` (`authorization_pending`, `slow_down`, `access_denied`, " +
          "`expired_token` until approved, then once), `client_credentials` (confidential clients: a token about the " +
          "client itself). Client authentication: HTTP Basic or the form, as registered; public clients send " +
          "`client_id`. `Cache-Control: no-store`.",
        security: "oauth2-client",
        request: { target: "form", schema: tokenForm },
        answers: { 200: { description: "Tokens.", schema: tokenAnswerSchema }, ...OAUTH2_ERRORS },
      }),
      rateLimit("OAUTH2"),
      async (c) => {
        const { params, client } = await clientRequest(c);
        return c.json(await tokenRequest(c.var.deps, client, params), 200, noStore);
      },
    )
    .post(
      "/oauth2/introspect",
      operation({
        summary: "Token introspection (RFC 7662)",
        description:
          "*form*. Whether a token of the calling client is active, and what it says; another client's token is just " +
          "`{active: false}`.",
        security: "oauth2-client",
        request: { target: "form", schema: tokenForm2 },
        answers: {
          200: { description: "The token's state.", schema: introspectionSchema },
          ...OAUTH2_ERRORS,
        },
      }),
      rateLimit("OAUTH2"),
      async (c) => {
        const { params, client } = await clientRequest(c);
        return c.json(await introspect(c.var.deps, client.clientId, requiredToken(params)), 200, noStore);
      },
    )
    .post(
      "/oauth2/revoke",
      operation({
        summary: "Token revocation (RFC 7009)",
        description:
          "*form*. Ends the grant of any token of the calling client (its refresh tokens, and its access tokens at " +
          "introspection and userinfo). The same empty 200 for unknown tokens.",
        security: "oauth2-client",
        request: { target: "form", schema: tokenForm2 },
        answers: {
          200: { description: "Revoked (or nothing to revoke); no body.", media: "empty" },
          ...OAUTH2_ERRORS,
        },
      }),
      async (c) => {
        const { params, client } = await clientRequest(c);
        await revoke(c.var.deps, client.clientId, requiredToken(params));
        return c.body(null, 200, noStore);
      },
    )
    .get("/oauth2/userinfo", USERINFO_DOC, userinfo)
    .post("/oauth2/userinfo", USERINFO_DOC, userinfo)
    .post(
      "/oauth2/device_authorization",
      operation({
        summary: "Device authorization (RFC 8628)",
        description:
          "*form*. A device code to poll the token endpoint with, and a user code for the person to enter at " +
          "`verification_uri` (the built-in device page). The client needs the device_code grant.",
        security: "oauth2-client",
        request: {
          target: "form",
          schema: z.object({
            scope: z.string().optional(),
            resource: z.string().optional(),
            ...clientCredentials,
          }),
        },
        answers: {
          200: { description: "The codes.", schema: deviceAuthorizationSchema },
          ...OAUTH2_ERRORS,
        },
      }),
      rateLimit("OAUTH2"),
      async (c) => {
        const { params, client } = await clientRequest(c);
        return c.json(await startDeviceAuthorization(c.var.deps, client, params), 200, noStore);
      },
    )
    .route("/", registrationRoutes)
    .route(DEVICE_PAGE_PATH, devicePageRoutes(loginUrl));
  if (!loginUrl) routes.route(LOGIN_PAGE_PATH, interactionRoutes);
  return routes;
}
