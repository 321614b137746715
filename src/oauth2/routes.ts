import { type Context, Hono } from "hono";
import { cors } from "hono/cors";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import type { Config } from "../config";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { requireAuth } from "../http/auth";
import { jsonBody } from "../http/validation";
import { getKeySet } from "../lib/keys";
import { LOGIN_PAGE_PATH } from "../lib/redirect";
import { rateLimit } from "../rate-limits/middleware";
import { AuthorizeRedirect, parseAuthorizationRequest } from "./authorize";
import { scopeClaims } from "./claims";
import { authenticateClient } from "./client-auth";
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

const discovery = (c: Ctx) =>
  c.json(discoveryDocument(c.var.config), 200, { "Cache-Control": "public, max-age=300" });

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

/** The authorization server (contract §3.5, §3.6), mounted on the auth API. */
export function oauth2Routes(loginUrl: string | undefined) {
  const routes = new Hono<AppEnv>()
    .use("/.well-known/openid-configuration", requireEnabled)
    .use("/.well-known/oauth-authorization-server", requireEnabled)
    .use("/oauth2/*", requireEnabled)
    .get("/.well-known/openid-configuration", discovery)
    .get("/.well-known/oauth-authorization-server", discovery)
    .get("/oauth2/jwks", async (c) => {
      // The same key set as /.well-known/jwks.json, so a rotation shows in both at once.
      const { jwks } = await getKeySet(c.var.config);
      return c.json({ keys: jwks }, 200, { "Cache-Control": "public, max-age=300" });
    })
    .get("/oauth2/authorize", authorize)
    .post("/oauth2/authorize", authorize)
    .get("/oauth2/login", async (c) =>
      c.json(await describeRequest(c.var.deps, c.req.query("request_id") ?? "")),
    )
    .post("/oauth2/login", requireAuth, jsonBody(loginBody), async (c) =>
      c.json(await completeWithAccessToken(c.var.deps, c.req.valid("json").requestId, c.var.auth!)),
    )
    .post("/oauth2/token", rateLimit("OAUTH2"), async (c) => {
      const { params, client } = await clientRequest(c);
      return c.json(await tokenRequest(c.var.deps, client, params), 200, noStore);
    })
    .post("/oauth2/introspect", rateLimit("OAUTH2"), async (c) => {
      const { params, client } = await clientRequest(c);
      return c.json(await introspect(c.var.deps, client.clientId, requiredToken(params)), 200, noStore);
    })
    .post("/oauth2/revoke", async (c) => {
      const { params, client } = await clientRequest(c);
      await revoke(c.var.deps, client.clientId, requiredToken(params));
      return c.body(null, 200, noStore);
    })
    .get("/oauth2/userinfo", userinfo)
    .post("/oauth2/userinfo", userinfo)
    .post("/oauth2/device_authorization", rateLimit("OAUTH2"), async (c) => {
      const { params, client } = await clientRequest(c);
      return c.json(await startDeviceAuthorization(c.var.deps, client, params), 200, noStore);
    })
    .route("/", registrationRoutes)
    .route(DEVICE_PAGE_PATH, devicePageRoutes(loginUrl));
  if (!loginUrl) routes.route(LOGIN_PAGE_PATH, interactionRoutes);
  return routes;
}
