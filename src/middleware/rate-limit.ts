import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { AppError } from "../errors";
import { toE164 } from "../lib/phone";
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
    return typeof value === "string" && value.length <= 254 ? value : undefined;
  } catch {
    return undefined; // Malformed bodies are the validator's business; the IP limit still applies.
  }
}

/**
 * One account, one key: the identifier as the service will store it (emails lower-cased, phone numbers in E.164),
 * so that writing it differently does not buy a fresh window.
 */
function identifierKey(field: string, value: string): string {
  if (field === "phoneNumber") return toE164(value) ?? value;
  return value.toLowerCase();
}

/**
 * Counts the request in `bucket` (contract §11) per client IP and, with `identifierField`, per the identifier the
 * body names (an email, a phone number), so one account cannot be hammered from many IPs. Runs before any
 * expensive work.
 */
export function rateLimit(bucket: RateLimitBucket, identifierField?: string) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const { enabled, buckets } = c.var.config.rateLimits;
    if (!enabled) return next();
    const { burst, intervalMs } = buckets[bucket];
    const keys = [`ip:${c.req.header("cf-connecting-ip") ?? "unknown"}`];
    const identifier = identifierField ? await bodyField(c, identifierField) : undefined;
    if (identifierField && identifier) keys.push(`id:${identifierKey(identifierField, identifier)}`);
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
