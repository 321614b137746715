import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../http/app-env";
import { rateLimit } from "./middleware";

/**
 * The coarse per-address guard of every auth request (contract §11, bucket `GLOBAL`). With the Workers Rate Limiting
 * binding (`GLOBAL_LIMITER`, `[[ratelimits]]` in wrangler.toml) it costs no storage round trip: counts are kept per
 * Cloudflare location and are approximate, which a flood guard can afford; its limit and period (10 or 60 s) are the
 * binding's. Without the binding (a deployment that removed it) the exact `RateLimiter` Durable Object counts, with
 * `AUTH_RATE_LIMIT_GLOBAL_*` (rate-limits/buckets.ts).
 *
 * Health, version and key-set answers touch no limiter: they are cheap, cacheable, and polled by monitors.
 */
const UNGUARDED =
  /\/(healthz|version|\.well-known\/jwks\.json|oauth2\/jwks|\.well-known\/openid-configuration|\.well-known\/oauth-authorization-server)$/;

const countGlobal = rateLimit("GLOBAL");

export const floodGuard = createMiddleware<AppEnv>(async (c, next) => {
  if (UNGUARDED.test(c.req.path)) return next();
  return countGlobal(c, next);
});
