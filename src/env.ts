import type { CodeChallenge } from "./durable/code-challenge";
import type { GuessGuard } from "./durable/guess-guard";
import type { RateLimiter } from "./durable/rate-limiter";
import type { RefreshSession } from "./durable/refresh-session";
import type { SessionFamilies } from "./durable/session-families";
import type { WebauthnChallenge } from "./durable/webauthn-challenge";
import type { ImageTransformer } from "./images-worker";

/** Bindings and variables the Worker receives. Values are validated by `config.ts`. */
export interface Env {
  DB: D1Database;
  REFRESH_SESSIONS: DurableObjectNamespace<RefreshSession>;
  SESSION_FAMILIES: DurableObjectNamespace<SessionFamilies>;
  CODE_CHALLENGES: DurableObjectNamespace<CodeChallenge>;
  RATE_LIMITERS: DurableObjectNamespace<RateLimiter>;
  WEBAUTHN_CHALLENGES: DurableObjectNamespace<WebauthnChallenge>;
  GUESS_GUARDS: DurableObjectNamespace<GuessGuard>;
  /**
   * Per-address counts of the rate-limit buckets (`[[ratelimits]]`, rate-limits.ts `ADDRESS_LIMITER_BINDINGS`);
   * without one, that bucket's addresses are counted exactly by the `RateLimiter` Durable Object.
   */
  GLOBAL_LIMITER?: RateLimit;
  BRUTE_FORCE_LIMITER?: RateLimit;
  SIGNUPS_LIMITER?: RateLimit;
  EMAIL_LIMITER?: RateLimit;
  SMS_LIMITER?: RateLimit;
  REFRESH_LIMITER?: RateLimit;
  OAUTH2_LIMITER?: RateLimit;
  TRANSFORM_LIMITER?: RateLimit;
  /** Pending OAuth2 authorization requests, keyed by request id, expiring after ten minutes. */
  OAUTH2_REQUESTS: KVNamespace;
  /** Identity providers' public keys (JWKS), cached for ID-token sign-in. */
  PROVIDER_KEYS: KVNamespace;
  /** File contents of the storage API, under `<bucketId>/<fileId>`. */
  FILES: R2Bucket;
  /** The image transformer Worker (wrangler.images.toml); without it image parameters answer 400. */
  IMAGE_TRANSFORMER?: Service<typeof ImageTransformer>;
  /** Optional: Cloudflare Email Service (`[[send_email]] name = "EMAIL"`), one of the mail transports. */
  EMAIL?: SendEmail;
  /** Optional: where outbound HTTP goes instead of the internet (tests bind a fake). */
  OUTBOUND?: Fetcher;
  [variable: string]: unknown;
}
