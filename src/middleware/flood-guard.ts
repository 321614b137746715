import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { RateLimitedError } from "../errors";
import { addressKey } from "../lib/client-address";
import { rateLimit } from "./rate-limit";

/**
 * The coarse per-address guard of every auth request (contract §11, bucket `GLOBAL`). With the Workers Rate Limiting
 * binding (`GLOBAL_LIMITER`, `[[ratelimits]]` in wrangler.toml) it costs no storage round trip: counts are kept per
 * Cloudflare location and are approximate, which a flood guard can afford; its limit and period (10 or 60 s) are the
 * binding's. Without the binding (a deployment that removed it) the exact `RateLimiter` Durable Object counts, with
 * `AUTH_RATE_LIMIT_GLOBAL_*`. The exact per-account buckets (sign-in, codes, mail, SMS) stay on the Durable Object.
 *
 * Health, version and key-set answers touch no limiter: they are cheap, cacheable, and polled by monitors.
 */
const UNGUARDED =
  /\/(healthz|version|\.well-known\/jwks\.json|oauth2\/jwks|\.well-known\/openid-configuration|\.well-known\/oauth-authorization-server)$/;

/** The binding's period when it refuses: it does not say how long is left, so the client waits one window. */
const BINDING_PERIOD_SECONDS = 60;

const exactGlobal = rateLimit("GLOBAL");

export const floodGuard = createMiddleware<AppEnv>(async (c, next) => {
  if (!c.var.config.rateLimits.enabled || UNGUARDED.test(c.req.path)) return next();
  const limiter = c.env.GLOBAL_LIMITER;
  if (!limiter) return exactGlobal(c, next);
  const { success } = await limiter.limit({
    key: `ip:${addressKey(c.req.header("cf-connecting-ip") ?? "unknown")}`,
  });
  if (!success) throw new RateLimitedError(BINDING_PERIOD_SECONDS);
  await next();
});
