import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { AppError } from "../errors";
import { timingSafeEqualString } from "../lib/crypto";

/**
 * The admin API (contract §10) answers only to `x-hasura-admin-secret` equal to `AUTH_ADMIN_SECRET`, compared in
 * constant time; missing or wrong is `401 unauthorized`. Without `AUTH_ADMIN_SECRET` the admin API does not exist:
 * every path answers 404, as an unknown route does.
 */
export const requireAdminSecret = createMiddleware<AppEnv>(async (c, next) => {
  const secret = c.var.config.AUTH_ADMIN_SECRET;
  if (!secret) {
    throw new AppError("route-not-found", `no route for ${c.req.method} ${new URL(c.req.url).pathname}`);
  }
  const given = c.req.header("x-hasura-admin-secret");
  if (given === undefined || !timingSafeEqualString(given, secret)) {
    throw new AppError("unauthorized", "missing or wrong admin secret (x-hasura-admin-secret)");
  }
  await next();
});

/** The console exists only where the admin API does: without `AUTH_ADMIN_SECRET` its pages are 404 too. */
export const requireConfiguredSecret = createMiddleware<AppEnv>(async (c, next) => {
  if (!c.var.config.AUTH_ADMIN_SECRET) {
    throw new AppError("route-not-found", `no route for ${c.req.method} ${new URL(c.req.url).pathname}`);
  }
  await next();
});
