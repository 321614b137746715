import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { AppError } from "../errors";
import { timingSafeEqualString } from "../lib/crypto";

/** Without `AUTH_ADMIN_SECRET` the admin API and console do not exist: every path answers 404, as an unknown route. */
function configuredSecret(c: Context<AppEnv>): string {
  const secret = c.var.config.AUTH_ADMIN_SECRET;
  if (!secret)
    throw new AppError("route-not-found", `no route for ${c.req.method} ${new URL(c.req.url).pathname}`);
  return secret;
}

/**
 * The admin API (contract §10) answers only to `x-hasura-admin-secret` equal to `AUTH_ADMIN_SECRET`, compared in
 * constant time; missing or wrong is `401 unauthorized`.
 */
export const requireAdminSecret = createMiddleware<AppEnv>(async (c, next) => {
  const secret = configuredSecret(c);
  const given = c.req.header("x-hasura-admin-secret");
  if (given === undefined || !timingSafeEqualString(given, secret)) {
    throw new AppError("unauthorized", "missing or wrong admin secret (x-hasura-admin-secret)");
  }
  await next();
});

/** The console's pages: 404 where the admin API is (its own sign-in checks the secret, console/session.ts). */
export const requireConfiguredSecret = createMiddleware<AppEnv>(async (c, next) => {
  configuredSecret(c);
  await next();
});
