import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { AppError, RateLimitedError } from "../errors";
import { checkAdminSecret } from "../http/admin-secret";
import type { AppEnv } from "../http/app-env";

/** Without `AUTH_ADMIN_SECRET` the admin API and console do not exist: every path answers 404, as an unknown route. */
function configuredSecret(c: Context<AppEnv>): string {
  const secret = c.var.config.secrets.adminSecret;
  if (!secret)
    throw new AppError("route-not-found", `no route for ${c.req.method} ${new URL(c.req.url).pathname}`);
  return secret;
}

/**
 * The admin API (contract §10) answers only to `x-hasura-admin-secret` equal to `AUTH_ADMIN_SECRET`, compared in
 * constant time; missing or wrong is `401 unauthorized`, too many wrong guesses from an address `429`.
 */
export const requireAdminSecret = createMiddleware<AppEnv>(async (c, next) => {
  configuredSecret(c);
  const check = await checkAdminSecret(c);
  if (check.outcome === "limited") throw RateLimitedError.forBucket("BRUTE_FORCE", check.retryAfterSeconds);
  if (check.outcome !== "right") {
    throw new AppError("unauthorized", "missing or wrong admin secret (x-hasura-admin-secret)");
  }
  // The secret names no one: an impersonation names its operator itself (its `actor`).
  c.var.deps.audit.actAs({ kind: "admin" });
  await next();
});

/** The console's pages: 404 where the admin API is (its own sign-in checks the secret, console/session.ts). */
export const requireConfiguredSecret = createMiddleware<AppEnv>(async (c, next) => {
  configuredSecret(c);
  // Whoever uses the console is an operator, or tries to be one (a wrong secret at its door is the admin's failure).
  c.var.deps.audit.actAs({ kind: "admin" });
  await next();
});
