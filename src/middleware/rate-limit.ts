import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { AppError } from "../errors";
import type { RateLimitBucket } from "../rate-limits";

/** 429 `too-many-requests`; the error handler turns `retryAfterSeconds` into the `Retry-After` header. */
export class RateLimitedError extends AppError {
  constructor(readonly retryAfterSeconds: number) {
    super("too-many-requests");
  }
}

async function bodyField(c: Context<AppEnv>, field: string): Promise<string | undefined> {
  try {
    const value = ((await c.req.json()) as Record<string, unknown>)[field];
    return typeof value === "string" && value.length <= 254 ? value.toLowerCase() : undefined;
  } catch {
    return undefined; // Malformed bodies are the validator's business; the IP limit still applies.
  }
}

/**
 * Counts the request in `bucket` (contract §11) per client IP and, with `identifierField`, per the identifier the
 * body names (an email), so one address cannot be hammered from many IPs. Runs before any expensive work.
 */
export function rateLimit(bucket: RateLimitBucket, identifierField?: string) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const { enabled, buckets } = c.var.config.rateLimits;
    if (!enabled) return next();
    const { burst, intervalMs } = buckets[bucket];
    const keys = [`ip:${c.req.header("cf-connecting-ip") ?? "unknown"}`];
    const identifier = identifierField ? await bodyField(c, identifierField) : undefined;
    if (identifier) keys.push(`id:${identifier}`);
    const namespace = c.env.RATE_LIMITERS;
    const now = c.var.deps.now();
    const results = await Promise.all(
      keys.map((key) => namespace.get(namespace.idFromName(`${bucket}:${key}`)).hit(burst, intervalMs, now)),
    );
    const refused = results.filter((r) => !r.allowed);
    if (refused.length > 0) throw new RateLimitedError(Math.max(...refused.map((r) => r.retryAfterSeconds)));
    await next();
  });
}
