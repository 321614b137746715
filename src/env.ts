import type { CodeChallenge } from "./durable/code-challenge";
import type { RateLimiter } from "./durable/rate-limiter";
import type { RefreshSession } from "./durable/refresh-session";
import type { WebauthnChallenge } from "./durable/webauthn-challenge";

/** Bindings and variables the Worker receives. Values are validated by `config.ts`. */
export interface Env {
  DB: D1Database;
  REFRESH_SESSIONS: DurableObjectNamespace<RefreshSession>;
  CODE_CHALLENGES: DurableObjectNamespace<CodeChallenge>;
  RATE_LIMITERS: DurableObjectNamespace<RateLimiter>;
  WEBAUTHN_CHALLENGES: DurableObjectNamespace<WebauthnChallenge>;
  /** File contents of the storage API, under `<bucketId>/<fileId>`. */
  FILES: R2Bucket;
  /** Optional: Cloudflare Email Service (`[[send_email]] name = "EMAIL"`), one of the mail transports. */
  EMAIL?: SendEmail;
  /** Optional: where outbound HTTP goes instead of the internet (tests bind a fake). */
  OUTBOUND?: Fetcher;
  [variable: string]: unknown;
}
