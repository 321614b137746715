import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { LOGIN_PAGE_PATH } from "../lib/redirect";
import { authenticateClient } from "./clients";
import { OAuth2Error } from "./errors";
import { oauth2Params, param } from "./params";

/** What the authorization server's route files share: the on switch, the no-store headers, the client's request. */

export type Ctx = Context<AppEnv>;

/**
 * Off unless `AUTH_OAUTH2_PROVIDER_ENABLED` (contract §3.5): then every path answers as a disabled feature does, but
 * the built-in login page's (`/oauth2/interaction`, `/oauth2/interaction/…`), which also serves the hosted pages of a
 * first-party app (contract §13) and refuses the authorization server's requests while it is off (interaction-describe.ts).
 */
export const requireEnabled = createMiddleware<AppEnv>(async (c, next) => {
  if (!c.var.config.oauth2.enabled && !isLoginPage(c)) {
    throw new AppError("disabled-endpoint", "the OAuth2 authorization server is disabled");
  }
  await next();
});

function isLoginPage(c: Ctx): boolean {
  const page = `${c.var.config.urls.authPrefix}${LOGIN_PAGE_PATH}`;
  return c.req.path === page || c.req.path.startsWith(`${page}/`);
}

/** Token answers are never stored by a cache or the browser (RFC 6749 §5.1). */
export const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" };

/**
 * The client-authenticated endpoints (token, introspection, revocation, device authorization) take the form and
 * the client it authenticates (RFC 6749 §2.3).
 */
export async function clientRequest(c: Ctx) {
  const params = await oauth2Params(c);
  // The endpoint's URL under the issuer, which a client assertion may name as its audience (client-assertion.ts).
  const endpoint = `${c.var.config.urls.server}${c.req.path.slice(c.req.path.lastIndexOf("/oauth2/"))}`;
  const client = await authenticateClient(c.var.deps, c.req.header("authorization"), params, endpoint);
  return { params, client };
}

/** The `token` parameter of introspection and revocation (RFC 7662 §2.1, RFC 7009 §2.1). */
export function requiredToken(params: Map<string, string>): string {
  const token = param(params, "token", 8192);
  if (!token) throw new OAuth2Error("invalid_request", "token is required");
  return token;
}

/** How a client authenticates in a form, for the OpenAPI document. */
export const clientCredentialFields = {
  client_id: z.string().optional().describe("Public clients, and client_secret_post"),
  client_secret: z.string().optional().describe("client_secret_post; else HTTP Basic"),
  client_assertion_type: z
    .literal("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
    .optional()
    .describe("private_key_jwt (RFC 7523 §2.2)"),
  client_assertion: z
    .string()
    .optional()
    .describe(
      "private_key_jwt: a JWT signed with one of the client's registered keys (PS256, ES256, EdDSA/Ed25519, RS256); " +
        "`iss` = `sub` = client_id, `aud` = the issuer, `exp` at most 5 minutes ahead, `jti` used once",
    ),
};
