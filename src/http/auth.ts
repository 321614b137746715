import { createMiddleware } from "hono/factory";
import { AppError } from "../errors";
import { verifyAccessToken } from "../lib/jwt";
import type { AppEnv } from "./app-env";

function bearer(header: string | undefined): string | null {
  const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  return match?.[1] ?? null;
}

/** Protected endpoints: a valid access token or 401 `unauthorized`. */
export const requireAuth = createMiddleware<AppEnv>(async (c, next) => {
  const token = bearer(c.req.header("authorization"));
  const payload = token ? await verifyAccessToken(c.var.config, token) : null;
  if (!payload) throw new AppError("unauthorized");
  c.set("auth", payload);
  await next();
});

/**
 * Endpoints where a bearer is optional (`B?`). The client sends its token on every request, possibly expired, so an
 * invalid one is treated as absent; the handler decides whether it needed one.
 */
export const optionalAuth = createMiddleware<AppEnv>(async (c, next) => {
  const token = bearer(c.req.header("authorization"));
  c.set("auth", token ? await verifyAccessToken(c.var.config, token) : null);
  await next();
});
