import { ConfigError, RateLimitedError, UnavailableError } from "../errors";
import type { RateLimiter } from "./rate-limiter";

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
  /** Dynamic client registration (`POST /oauth2/register`), per client address: a flood makes no clients. */
  REGISTRATION: { burst: 10, interval: "1h" },
} as const;

export type RateLimitBucket = keyof typeof RATE_LIMIT_DEFAULTS;

export interface BucketLimit {
  burst: number;
  intervalMs: number;
}

export interface RateLimitConfig {
  enabled: boolean;
  buckets: Record<RateLimitBucket, BucketLimit>;
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
  const buckets = {} as Record<RateLimitBucket, BucketLimit>;
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
 * Where each per-address count goes when the deployment has it (contract §11 as this service implements it,
 * docs/rate-limits.md): a Workers Rate Limiting binding (`[[ratelimits]]` in wrangler.toml), counted by the platform
 * per Cloudflare location with no storage round trip. Approximate, and its limit and period (10 or 60 s) are the
 * binding's, which is fine for per-address flood control. Without the binding the exact Durable Object counts with
 * `AUTH_RATE_LIMIT_<BUCKET>_*`. Per-account counts (an email, a phone number, a file) always stay exact.
 */
export const ADDRESS_LIMITER_BINDINGS = {
  GLOBAL: "GLOBAL_LIMITER",
  BRUTE_FORCE: "BRUTE_FORCE_LIMITER",
  SIGNUPS: "SIGNUPS_LIMITER",
  EMAIL: "EMAIL_LIMITER",
  SMS: "SMS_LIMITER",
  REFRESH: "REFRESH_LIMITER",
  OAUTH2: "OAUTH2_LIMITER",
  TRANSFORM: "TRANSFORM_LIMITER",
  REGISTRATION: "REGISTRATION_LIMITER",
} as const satisfies Partial<Record<RateLimitBucket, string>>;

/** A binding refuses without saying how long is left; the client is told to wait one period (wrangler.toml: 60 s). */
export const BINDING_PERIOD_SECONDS = 60;

export interface RateLimitSubject {
  /** The client address as `addressKey` folds it (IPv6 per /64). */
  address?: string;
  /** The account the request is about, as stored (`id:<email>`, `id:<E.164>`, `file:<uuid>`): counted exactly. */
  account?: string;
}

export interface RateLimitRefusal {
  bucket: RateLimitBucket;
  retryAfterSeconds: number;
}

type LimiterBindings = { RATE_LIMITERS: DurableObjectNamespace<RateLimiter> } & Record<string, unknown>;

function addressBinding(env: LimiterBindings, bucket: RateLimitBucket): RateLimit | undefined {
  const name = (ADDRESS_LIMITER_BINDINGS as Partial<Record<RateLimitBucket, string>>)[bucket];
  return name ? (env[name] as RateLimit | undefined) : undefined;
}

async function hitExact(
  env: LimiterBindings,
  config: RateLimitConfig,
  bucket: RateLimitBucket,
  key: string,
  now: number,
): Promise<number | null> {
  const { burst, intervalMs } = config.buckets[bucket];
  const namespace = env.RATE_LIMITERS;
  const result = await namespace.get(namespace.idFromName(`${bucket}:${key}`)).hit(burst, intervalMs, now);
  return result.allowed ? null : result.retryAfterSeconds;
}

/**
 * Counts one request against `bucket` for its client address and, when given, its account. The address goes to the
 * bucket's Rate Limiting binding when there is one, so a request calls at most one `RateLimiter` object (the
 * account's). Returns null when both allow it, else the bucket and the seconds until one more request fits.
 */
export async function countRequest(
  env: LimiterBindings,
  config: RateLimitConfig,
  bucket: RateLimitBucket,
  subject: RateLimitSubject,
  now: number,
): Promise<RateLimitRefusal | null> {
  if (!config.enabled) return null;
  const binding = addressBinding(env, bucket);
  const addressKey = subject.address === undefined ? undefined : `ip:${subject.address}`;
  const [addressWait, accountWait] = await Promise.all([
    addressKey === undefined
      ? null
      : binding
        ? binding.limit({ key: addressKey }).then((r) => (r.success ? null : BINDING_PERIOD_SECONDS))
        : hitExact(env, config, bucket, addressKey, now),
    subject.account ? hitExact(env, config, bucket, subject.account, now) : null,
  ]).catch((error: unknown) => {
    // A limit that cannot be counted fails closed, and says so: nothing behind it has run yet (contract §1).
    throw new UnavailableError(`rate limit ${bucket}: ${(error as Error)?.message ?? error}`);
  });
  const waits = [addressWait, accountWait].filter((wait): wait is number => wait !== null);
  return waits.length > 0 ? { bucket, retryAfterSeconds: Math.max(...waits) } : null;
}

/** `countRequest`, refusing with the bucket's 429 (contract §11: the answer names its bucket) when over. */
export async function refuseOverLimit(
  env: LimiterBindings,
  config: RateLimitConfig,
  bucket: RateLimitBucket,
  subject: RateLimitSubject,
  now: number,
): Promise<void> {
  const refusal = await countRequest(env, config, bucket, subject, now);
  if (refusal) throw RateLimitedError.forBucket(refusal.bucket, refusal.retryAfterSeconds);
}

/** What is being guessed: each kind has its own count per address. */
export type GuessedSecret = "secret-guesses" | "device-user-codes" | "setup-links";

/**
 * Guesses of a secret from one address (the admin secret in `x-hasura-admin-secret`, a device flow's user code),
 * counted exactly in the `BRUTE_FORCE` bucket's limits: each wrong guess counts, and while the wrong guesses are over
 * the limit every attempt from the address is refused, the right one too (otherwise a guesser would learn it from the
 * one answer that is not a refusal). Returns the seconds to wait when refused, else null.
 */
export async function countGuess(
  env: LimiterBindings,
  config: RateLimitConfig,
  guessed: GuessedSecret,
  address: string,
  right: boolean,
  now: number,
): Promise<number | null> {
  if (!config.enabled) return null;
  const { burst, intervalMs } = config.buckets.BRUTE_FORCE;
  const namespace = env.RATE_LIMITERS;
  const counter = namespace.get(namespace.idFromName(`BRUTE_FORCE:${guessed}:ip:${address}`));
  const result = await (right
    ? counter.peek(burst, intervalMs, now)
    : counter.hit(burst, intervalMs, now)
  ).catch((error: unknown) => {
    throw new UnavailableError(`guess count ${guessed}: ${(error as Error)?.message ?? error}`);
  });
  return result.allowed ? null : result.retryAfterSeconds;
}

/** A guess of the admin secret (`countGuess`). */
export const secretGuess = (
  env: LimiterBindings,
  config: RateLimitConfig,
  address: string,
  right: boolean,
  now: number,
) => countGuess(env, config, "secret-guesses", address, right, now);
