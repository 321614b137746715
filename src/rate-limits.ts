import { ConfigError } from "./config";
import type { RateLimiter } from "./durable/rate-limiter";

/**
 * Rate-limit buckets of contract §11 with their defaults. Names follow the reference where it has one
 * (`AUTH_RATE_LIMIT_<BUCKET>_BURST`, `_INTERVAL`); the interval is seconds or a duration such as `5m`, `1h`.
 */
export const RATE_LIMIT_DEFAULTS = {
  GLOBAL: { burst: 1000, interval: "1m" },
  BRUTE_FORCE: { burst: 10, interval: "5m" },
  SIGNUPS: { burst: 10, interval: "5m" },
  EMAIL: { burst: 10, interval: "1h" },
  SMS: { burst: 10, interval: "1h" },
  REFRESH: { burst: 100, interval: "5m" },
  OAUTH2: { burst: 100, interval: "5m" },
  /** Image transformations that miss the variant cache, per client address (storage). */
  TRANSFORM: { burst: 100, interval: "5m" },
  /** The same, per file: one image cannot be made to produce an endless stream of distinct variants. */
  TRANSFORM_FILE: { burst: 30, interval: "5m" },
} as const;

export type RateLimitBucket = keyof typeof RATE_LIMIT_DEFAULTS;

export interface RateLimit {
  burst: number;
  intervalMs: number;
}

export interface RateLimitConfig {
  enabled: boolean;
  buckets: Record<RateLimitBucket, RateLimit>;
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000 };

function parseInterval(name: string, value: string): number {
  const match = /^(\d+)(s|m|h)?$/.exec(value.trim());
  const ms = match ? Number(match[1]) * (UNITS[match[2] ?? "s"] ?? 1000) : Number.NaN;
  if (!(ms > 0))
    throw new ConfigError(`invalid configuration: ${name} must be seconds or a duration like 5m`);
  return ms;
}

export function parseRateLimits(env: Record<string, unknown>): RateLimitConfig {
  const enable = env.AUTH_RATE_LIMIT_ENABLE;
  if (enable !== undefined && enable !== "" && !["true", "false", "1", "0"].includes(String(enable))) {
    throw new ConfigError("invalid configuration: AUTH_RATE_LIMIT_ENABLE must be true or false");
  }
  const buckets = {} as Record<RateLimitBucket, RateLimit>;
  for (const [bucket, defaults] of Object.entries(RATE_LIMIT_DEFAULTS) as [
    RateLimitBucket,
    (typeof RATE_LIMIT_DEFAULTS)[RateLimitBucket],
  ][]) {
    const burstName = `AUTH_RATE_LIMIT_${bucket}_BURST`;
    const intervalName = `AUTH_RATE_LIMIT_${bucket}_INTERVAL`;
    const burst = Number(env[burstName] ?? defaults.burst);
    if (!Number.isInteger(burst) || burst < 1)
      throw new ConfigError(`invalid configuration: ${burstName} must be a positive integer`);
    buckets[bucket] = {
      burst,
      intervalMs: parseInterval(intervalName, String(env[intervalName] ?? defaults.interval)),
    };
  }
  return { enabled: enable === undefined || enable === "" || enable === "true" || enable === "1", buckets };
}

/**
 * Counts one request against `bucket` under each of `keys` (`ip:…`, `id:…`, `file:…`), each key in its own
 * `RateLimiter` object. Returns null when every key allows it, else the seconds until one more request fits.
 */
export async function consumeRateLimit(
  namespace: DurableObjectNamespace<RateLimiter>,
  config: RateLimitConfig,
  bucket: RateLimitBucket,
  keys: string[],
  now: number,
): Promise<number | null> {
  if (!config.enabled) return null;
  const { burst, intervalMs } = config.buckets[bucket];
  const results = await Promise.all(
    keys.map((key) => namespace.get(namespace.idFromName(`${bucket}:${key}`)).hit(burst, intervalMs, now)),
  );
  const refused = results.filter((r) => !r.allowed);
  return refused.length > 0 ? Math.max(...refused.map((r) => r.retryAfterSeconds)) : null;
}
