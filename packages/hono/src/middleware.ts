import type { Context, Env, MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { bindingClient, bindingOf } from "./binding.js";
import type { AuthClient, Identity } from "./client.js";
import { EdgeAuthError } from "./errors.js";
import { type RemoteOptions, remoteClient } from "./remote.js";
import type { Resource } from "./service.js";

/** The variables this package sets: `c.var.auth` (by `auth()`), `c.var.identity` (by the guards). */
export interface AuthVariables {
  auth: AuthClient;
  identity: Identity;
}
export type AuthEnv = { Variables: AuthVariables };

/** On Cloudflare: the name of the env's service binding to the service's `AuthService` entrypoint. */
export interface BindingOptions {
  binding: string;
}
export type AuthOptions = BindingOptions | RemoteOptions;

/**
 * Sets `c.var.auth`: through the binding (`auth({ binding: "AUTH" })`) or, off Cloudflare, through the service's JWKS
 * and AuthZEN API (`auth({ issuer, jwksUrl, authzenUrl, clientCredentials })`). The options are checked here, once.
 */
export function auth(options: AuthOptions): MiddlewareHandler<{ Variables: Pick<AuthVariables, "auth"> }> {
  if ("binding" in options) {
    if (typeof options.binding !== "string" || !options.binding) {
      throw new TypeError('@edge-auth/hono: auth({ binding }) needs the binding\'s name, e.g. "AUTH"');
    }
    const name = options.binding;
    return createMiddleware(async (c, next) => {
      c.set("auth", bindingClient(bindingOf(c.env, name)));
      await next();
    });
  }
  if (typeof options.issuer !== "string" || !URL.canParse(options.issuer)) {
    throw new TypeError(
      "@edge-auth/hono: auth({ issuer }) needs the service's issuer URL (its AUTH_SERVER_URL)",
    );
  }
  if (!options.authzenUrl !== !options.clientCredentials) {
    throw new TypeError(
      "@edge-auth/hono: permissions off Cloudflare need both `authzenUrl` and `clientCredentials`",
    );
  }
  // One client for the app's life: its key set and its client-credentials token are cached across requests.
  const client = remoteClient(options);
  return createMiddleware(async (c, next) => {
    c.set("auth", client);
    await next();
  });
}

function clientOf(c: Context<AuthEnv>): AuthClient {
  const client = c.var.auth;
  if (!client)
    throw new TypeError("@edge-auth/hono: mount auth(...) before requireUser and requirePermission");
  return client;
}

const unauthenticated = () =>
  new EdgeAuthError("unauthorized", "missing or invalid access token", {
    headers: { "www-authenticate": "Bearer" },
  });

/**
 * 401 unless the request carries a token (or PAT) the service accepts; sets `c.var.identity`. `live: true` also
 * refuses a session that has ended (signed out, revoked, user disabled) — at once, not when its token expires.
 */
export function requireUser(options: { live?: boolean } = {}): MiddlewareHandler<AuthEnv> {
  const live = options.live === true;
  return createMiddleware<AuthEnv>(async (c, next) => {
    const identity = await clientOf(c).authenticate(c.req.raw, { live });
    if (!identity) throw unauthenticated();
    c.set("identity", identity);
    await next();
  });
}

/**
 * 403 unless the service's policies allow the signed-in user `action` on the resource `resource(c)` names (an
 * AuthZEN evaluation: subject `user` with the user's id). Authenticates first when no `requireUser` ran before it.
 */
export function requirePermission<E extends Env = AuthEnv>(
  action: string,
  resource: (c: Context<E & AuthEnv>) => Resource | Promise<Resource>,
  options: { context?: (c: Context<E & AuthEnv>) => Record<string, unknown> } = {},
): MiddlewareHandler<E & AuthEnv> {
  if (typeof action !== "string" || !action)
    throw new TypeError("@edge-auth/hono: requirePermission needs an action");
  return createMiddleware<E & AuthEnv>(async (c, next) => {
    const client = clientOf(c as unknown as Context<AuthEnv>);
    let identity = c.var.identity as Identity | undefined;
    if (!identity) {
      identity = (await client.authenticate(c.req.raw)) ?? undefined;
      if (!identity) throw unauthenticated();
      c.set("identity", identity);
    }
    const target = await resource(c);
    const { decision } = await client.check({
      subject: { type: "user", id: identity.user.id },
      action: { name: action },
      resource: target,
      ...(options.context ? { context: options.context(c) } : {}),
    });
    if (!decision) throw new EdgeAuthError("forbidden", `not allowed to ${action} this ${target.type}`);
    await next();
  });
}
