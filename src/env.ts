/**
 * wrangler.toml's bindings as `wrangler types` declares them (its name for the top-level environment). Not
 * `Cloudflare.Env`, which the test setup extends with this very interface (test/env.d.ts).
 */
type GeneratedEnv = __BaseEnv_Env;

/**
 * Bindings and variables the Worker receives. The bindings of wrangler.toml are typed by `wrangler types`
 * (`worker-configuration.d.ts`, regenerated with `npm run cf-typegen`; a test fails when it is out of date). What is
 * added here is what wrangler.toml does not declare, or declares more loosely than the code relies on. Values of
 * variables and secrets are validated by `config.ts`.
 */
export interface Env extends GeneratedEnv {
  /** Optional: Cloudflare Email Service (`[[send_email]] name = "EMAIL"`), one of the mail transports. */
  EMAIL?: SendEmail;
  /** Optional: where outbound HTTP goes instead of the internet (tests bind a fake). */
  OUTBOUND?: Fetcher;
  /**
   * Optional: the app's Postgres through Hyperdrive, where the mirror keeps Nhost's `auth` and `storage` tables
   * (src/mirror/). Bound only when configured: `AUTH_MIRROR_DATABASE_URL` for `npm start`, wrangler.toml in production.
   */
  MIRROR_DB?: Hyperdrive;
  /** Variables and secrets, read and validated by config.ts. */
  [variable: string]: unknown;
}
