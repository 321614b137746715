import { z } from "zod";
import { LANGUAGES } from "./browser/text";
import { shardList } from "./db/shard-list";
import { ConfigError } from "./errors";
import { brandColourSchema, brandLogoUrlSchema, brandNameSchema } from "./lib/brand";
import { ARGON2_PARAMS, type Argon2Cost, TEST_ARGON2_PARAMS } from "./lib/password";
import { parseRateLimits } from "./rate-limits/buckets";
import { bool, isLocalUrl, list, type SettingsSlice, url } from "./settings/kit";
import { messageSettings } from "./settings/messages";
import { tokenSettings } from "./settings/tokens";
import { turnstileSettings } from "./settings/turnstile";

/**
 * The service's settings: the core below (what every part reads: URLs, secrets, roles, languages, who may sign up,
 * tokens, transports) and each feature's own slice, declared in its settings.ts and listed by its feature.ts; the
 * runtime parses them all together (src/runtime/config.ts `getConfig`). Environment variables keep the reference's
 * names (contract §9); the parsed settings are nested by subject.
 */

const apiPrefix = (fallback: string) =>
  z
    .string()
    .regex(/^\/[\w/-]*\/v1$/, "must start with / and end with /v1")
    .default(fallback);

const coreVars = z.object({
  AUTH_API_PREFIX: apiPrefix("/auth/v1"),
  AUTH_SERVER_URL: url.default("http://localhost:8787/auth/v1"),
  /** Public origin of the storage API; presigned URLs start with it. */
  STORAGE_SERVER_URL: url.default("http://localhost:8787"),
  STORAGE_API_PREFIX: apiPrefix("/storage/v1"),
  AUTH_CLIENT_URL: url.default("http://localhost:3000"),
  AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: list(),
  AUTH_CORS_ORIGINS: list(),
  AUTH_ENCRYPTION_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, "must be 32 bytes as 64 hex characters")
    .optional(),
  AUTH_ADMIN_SECRET: z.string().min(16).optional(),
  AUTH_JWT_PRIVATE_KEYS: z.string().optional(),
  HASURA_GRAPHQL_JWT_SECRET: z
    .string()
    .optional()
    .refine(
      (v) => !v || !/"type"\s*:\s*"HS(256|384|512)"/.test(v),
      "is this service's own signing key (RS256 or Ed25519); an HS256 secret from Nhost goes in AUTH_IMPORTED_JWT_SECRET, which accepts the old project's tokens for a while after the cut-over (docs/migrating-from-nhost.md)",
    ),
  HASURA_GRAPHQL_GRAPHQL_URL: url.optional(),
  HASURA_GRAPHQL_ADMIN_SECRET: z.string().min(1).optional(),
  AUTH_USER_DEFAULT_ROLE: z.string().min(1).default("user"),
  AUTH_USER_DEFAULT_ALLOWED_ROLES: list(["user", "me"]),
  AUTH_LOCALE_DEFAULT: z.string().min(2).max(3).default("en"),
  /** What a user's `locale` may be (Nhost's meaning); default every shipped language (docs/decisions.md "Languages"). */
  AUTH_LOCALE_ALLOWED_LOCALES: list([...LANGUAGES]),
  /** The languages the pages and mails speak (contract §13), among the shipped ones; the first is the fallback. */
  AUTH_UI_LOCALES: list([...LANGUAGES]).pipe(z.array(z.enum(LANGUAGES)).min(1)),
  AUTH_DISABLE_SIGNUP: bool(false),
  AUTH_DISABLE_NEW_USERS: bool(false),
  AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: bool(true),
  AUTH_ACCESS_CONTROL_ALLOWED_EMAILS: list(),
  AUTH_ACCESS_CONTROL_ALLOWED_EMAIL_DOMAINS: list(),
  AUTH_ACCESS_CONTROL_BLOCKED_EMAILS: list(),
  AUTH_ACCESS_CONTROL_BLOCKED_EMAIL_DOMAINS: list(),
  // Off by default (a decision, docs/decisions.md): a Gravatar URL publishes an unsalted hash of the email.
  AUTH_GRAVATAR_ENABLED: bool(false),
  AUTH_GRAVATAR_DEFAULT: z
    .enum(["blank", "identicon", "monsterid", "wavatar", "retro", "robohash", "mp", "404"])
    .default("blank"),
  AUTH_GRAVATAR_RATING: z.enum(["g", "pg", "r", "x"]).default("g"),
  /** The brand of the pages and mails (contract §13); the console's setting, when made, wins over these. */
  // The same rules as the console's and the admin API's (src/lib/brand.ts): https logos only, #rrggbb colours.
  AUTH_BRAND_NAME: brandNameSchema.optional(),
  AUTH_BRAND_LOGO_URL: brandLogoUrlSchema.optional(),
  AUTH_BRAND_COLOR: brandColourSchema("#1a73e8").optional(),
  AUTH_BRAND_COLOR_DARK: brandColourSchema("#8ab4f8").optional(),
  /** Days the audit log keeps an event (contract §10); the daily cron prunes older ones. */
  AUTH_AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  /** The D1 bindings users are spread over, the home database `DB` first (src/db/shard-list.ts). */
  AUTH_D1_SHARDS: shardList,
  /** The event stream's first retry delay in seconds, doubled per attempt up to 12 hours (src/events/retry.ts). */
  AUTH_EVENTS_RETRY_DELAY_SECONDS: z.coerce.number().int().min(0).max(3600).default(10),
  /** Loopback hosts allowed in outbound URLs (contract §1), heeded only while AUTH_SERVER_URL is itself local. */
  AUTH_OUTBOUND_ALLOW_LOCAL: bool(false),
  /** The test suite's password-hash cost (`cheap`, src/lib/password.ts); heeded only where the server is local. */
  TEST_PASSWORD_HASH: z.enum(["cheap"]).optional(),
  /** How long an isolate keeps its key set (ms, src/signing-keys/keys.ts), for the crowd test to span refreshes sooner. */
  TEST_KEY_SET_TTL_MS: z.coerce.number().int().min(1_000).max(10_000).optional(),
  AUTH_CONCEAL_ERRORS: bool(false),
});

/** The development landing page's path under the auth API (src/auth/dev/landing.ts). */
export const DEV_LANDING_PATH = "/dev/landing";

function baseSettings(data: z.output<typeof coreVars>, env: Readonly<Record<string, unknown>>) {
  if (!data.AUTH_JWT_PRIVATE_KEYS && !data.HASURA_GRAPHQL_JWT_SECRET) {
    throw new ConfigError(
      "invalid configuration: AUTH_JWT_PRIVATE_KEYS or HASURA_GRAPHQL_JWT_SECRET must be set",
    );
  }
  if (!data.AUTH_ENCRYPTION_KEY)
    throw new ConfigError("invalid configuration: AUTH_ENCRYPTION_KEY must be set");
  const server = data.AUTH_SERVER_URL;
  // The test suite's shortcuts never reach a deployment: cheap password hashes would fall to a stolen table thousands
  // of times faster, and retries at once would spend a message's 16 attempts in seconds.
  const development = isLocalUrl(server);
  const roles = data.AUTH_USER_DEFAULT_ALLOWED_ROLES;
  return {
    urls: {
      /** `AUTH_SERVER_URL`: the auth API's public URL, the issuer of every token, the root of every page. */
      server,
      /** An absolute URL under the auth API: `urls.auth("/verify")` (the path starts with `/`). */
      auth: (path = "") => `${server}${path}`,
      /** The auth API's path on its host (`AUTH_SERVER_URL`'s), under which every page and cookie lives. */
      authPath: new URL(server).pathname.replace(/\/$/, ""),
      /** Where the Worker mounts the auth API (`AUTH_API_PREFIX`). */
      authPrefix: data.AUTH_API_PREFIX,
      storage: data.STORAGE_SERVER_URL,
      storagePrefix: data.STORAGE_API_PREFIX,
      client: data.AUTH_CLIENT_URL,
      /**
       * Where mailed links and other flows send the browser when the request named no `redirectTo`: the client URL,
       * except on a development server where `AUTH_CLIENT_URL` was never set (no app runs at its default yet): there,
       * the service's own landing page, which says what happened and what an app would receive.
       */
      defaultRedirect:
        development && !env.AUTH_CLIENT_URL ? `${server}${DEV_LANDING_PATH}` : data.AUTH_CLIENT_URL,
      allowedRedirects: data.AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS,
      corsOrigins: data.AUTH_CORS_ORIGINS,
    },
    secrets: {
      /** `AUTH_ENCRYPTION_KEY`, checked present and 32 bytes: what encrypts secrets at rest and keys every HMAC. */
      encryptionKey: data.AUTH_ENCRYPTION_KEY,
      adminSecret: data.AUTH_ADMIN_SECRET,
      jwtPrivateKeys: data.AUTH_JWT_PRIVATE_KEYS,
      hasuraJwtSecret: data.HASURA_GRAPHQL_JWT_SECRET,
    },
    hasura: { graphqlUrl: data.HASURA_GRAPHQL_GRAPHQL_URL, adminSecret: data.HASURA_GRAPHQL_ADMIN_SECRET },
    /** Allowed roles always contain the default role (contract §2). */
    roles: {
      default: data.AUTH_USER_DEFAULT_ROLE,
      allowed: roles.includes(data.AUTH_USER_DEFAULT_ROLE) ? roles : [data.AUTH_USER_DEFAULT_ROLE, ...roles],
    },
    locales: {
      default: data.AUTH_LOCALE_DEFAULT,
      allowed: data.AUTH_LOCALE_ALLOWED_LOCALES,
      ui: data.AUTH_UI_LOCALES,
    },
    signUp: {
      disabled: data.AUTH_DISABLE_SIGNUP,
      newUsersDisabled: data.AUTH_DISABLE_NEW_USERS,
      emailVerifiedRequired: data.AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED,
      allowedEmails: data.AUTH_ACCESS_CONTROL_ALLOWED_EMAILS,
      allowedEmailDomains: data.AUTH_ACCESS_CONTROL_ALLOWED_EMAIL_DOMAINS,
      blockedEmails: data.AUTH_ACCESS_CONTROL_BLOCKED_EMAILS,
      blockedEmailDomains: data.AUTH_ACCESS_CONTROL_BLOCKED_EMAIL_DOMAINS,
    },
    gravatar: {
      enabled: data.AUTH_GRAVATAR_ENABLED,
      default: data.AUTH_GRAVATAR_DEFAULT,
      rating: data.AUTH_GRAVATAR_RATING,
    },
    brand: {
      name: data.AUTH_BRAND_NAME,
      logoUrl: data.AUTH_BRAND_LOGO_URL,
      color: data.AUTH_BRAND_COLOR,
      colorDark: data.AUTH_BRAND_COLOR_DARK,
    },
    audit: { retentionDays: data.AUTH_AUDIT_RETENTION_DAYS },
    shards: data.AUTH_D1_SHARDS,
    /** 0 (retry at once, the test suite's) is heeded only where the server is local: elsewhere it is the default. */
    events: {
      retryDelaySeconds:
        data.AUTH_EVENTS_RETRY_DELAY_SECONDS === 0 && !development
          ? 10
          : data.AUTH_EVENTS_RETRY_DELAY_SECONDS,
    },
    outbound: { allowLocal: data.AUTH_OUTBOUND_ALLOW_LOCAL && development },
    /** Whether the service runs on the developer's machine (its URL is loopback): development-only leniencies. */
    development,
    /** argon2id's cost for new hashes: the production parameters, or the test suite's (`TEST_PASSWORD_HASH`). */
    passwordHashCost: (data.TEST_PASSWORD_HASH === "cheap" && development
      ? TEST_ARGON2_PARAMS
      : ARGON2_PARAMS) as Argon2Cost,
    /** How long an isolate trusts its key set: 10 s, or the test suite's (`TEST_KEY_SET_TTL_MS`) where it is local. */
    keySetTtlMs: (development && data.TEST_KEY_SET_TTL_MS) || 10_000,
    concealErrors: data.AUTH_CONCEAL_ERRORS,
    rateLimits: parseRateLimits(env as Record<string, unknown>),
  };
}

type Base = ReturnType<typeof baseSettings>;
// biome-ignore lint/suspicious/noExplicitAny: any slice's output
type Resolved<S extends { resolve: (...args: any[]) => object }> = ReturnType<S["resolve"]>;

/** The core settings: what every part of the service reads. */
export type CoreConfig = Base &
  Resolved<typeof tokenSettings> &
  Resolved<typeof messageSettings> &
  Resolved<typeof turnstileSettings>;

/**
 * Each feature's own settings, added by its settings.ts (`declare module "../config" { interface FeatureSettings
 * extends … }`), so a feature's slice is typed where it is declared and read as `config.<slice>` everywhere.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by the features' declaration merging
export interface FeatureSettings {}

export type Config = CoreConfig & FeatureSettings;

/** A feature's settings slice: it may read the core (parsed first) and the raw environment. */
// biome-ignore lint/suspicious/noExplicitAny: each slice has its own variables; the runtime parses them as a list
export type FeatureSettingsSlice = SettingsSlice<any, CoreConfig, object>;

/**
 * Parses the core and the features' slices, reporting every bad variable at once under its own name, then resolves
 * them in order: the core's groups, then each feature's slice over the core.
 */
export function parseConfig(env: object, slices: readonly FeatureSettingsSlice[]): Config {
  const raw = env as Readonly<Record<string, unknown>>;
  const all = [
    coreVars,
    tokenSettings.vars,
    messageSettings.vars,
    turnstileSettings.vars,
    ...slices.map((s) => s.vars),
  ];
  const parsed = all.map((vars) => vars.safeParse(raw));
  const problems = parsed.flatMap((result) =>
    result.success ? [] : result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`),
  );
  if (problems.length > 0) throw new ConfigError(`invalid configuration: ${problems.join("; ")}`);
  const data = parsed.map((result) => result.data);
  const base = baseSettings(data[0] as z.output<typeof coreVars>, raw);
  const core: CoreConfig = {
    ...base,
    ...tokenSettings.resolve(data[1] as never, base, raw),
    ...messageSettings.resolve(data[2] as never, base, raw),
    ...turnstileSettings.resolve(data[3] as never, base, raw),
  };
  const config = { ...core } as Config;
  for (const [index, slice] of slices.entries()) {
    Object.assign(config, slice.resolve(data[4 + index] as never, core, raw));
  }
  return config;
}
