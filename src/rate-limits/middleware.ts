import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../http/app-env";
import { toE164 } from "../lib/phone";
import { type RateLimitBucket, refuseOverLimit } from "./buckets";
import { addressKey } from "./client-address";

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
 * Counts the request in `bucket` (contract §11) per client address and, with `identifierField`, per the account the
 * body names (an email, a phone number), so one account cannot be hammered from many addresses. The address count
 * goes to the bucket's Rate Limiting binding when the deployment has one (rate-limits/buckets.ts), the account count to its
 * exact `RateLimiter` object. Runs before any expensive work.
 */
export function rateLimit(bucket: RateLimitBucket, identifierField?: string) {
  return createMiddleware<AppEnv>(async (c, next) => {
    // `c.get`, not `c.var`: Hono builds `c.var` anew (an object of every variable) on each read, on every request here.
    const { rateLimits } = c.get("config");
    if (!rateLimits.enabled) return next();
    const identifier = identifierField ? await bodyField(c, identifierField) : undefined;
    await refuseOverLimit(
      c.env,
      rateLimits,
      bucket,
      {
        address: addressKey(c.req.header("cf-connecting-ip") ?? "unknown"),
        account:
          identifierField && identifier ? `id:${identifierKey(identifierField, identifier)}` : undefined,
      },
      c.get("deps").now(),
    );
    await next();
  });
}
