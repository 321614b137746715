import { z } from "zod";
import { LANGUAGES } from "./browser/text";
import { ConfigError } from "./errors";
import { type HooksConfig, parseHooks } from "./hooks/config";
import { brandColourSchema, brandLogoUrlSchema, brandNameSchema } from "./lib/brand";
import { parseImportedJwtSecret } from "./lib/imported-tokens";
import { isLoopbackHost } from "./lib/loopback";
import { ARGON2_PARAMS, type Argon2Cost, TEST_ARGON2_PARAMS } from "./lib/password";
import { type Catalog, templateCatalog } from "./mail/templates";
import { type ProvidersConfig, parseProviders } from "./providers/config";
import { parseRateLimits, type RateLimitConfig } from "./rate-limits/buckets";

/**
 * Every environment variable the service reads, with the reference's names (contract §9) and defaults.
 * Parsed once per env object: Workers reuse the env object across requests in an isolate.
 */

const bool = (fallback: boolean) =>
  z
    .enum(["true", "false", "1", "0", ""])
    .optional()
    .transform((v) => (v === undefined || v === "" ? fallback : v === "true" || v === "1"));

const list = (fallback: string[] = []) =>
  z
    .string()
    .optional()
    .transform((v) =>
      v === undefined
        ? fallback
        : v
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean),
    );

/**
 * What Turnstile can guard, by name (`AUTH_TURNSTILE_ENDPOINTS`; each is also the widget `action` the built-in page
 * uses): `signup` every request that can create a user (src/http/sign-up-gate.ts), `passwordless` every mail or SMS
 * sign-in send, `password-reset` the reset mail,
 * `signin` email and password, `oauth2-registration` dynamic client registration.
 */
export const TURNSTILE_ENDPOINTS = [
  "signup",
  "passwordless",
  "password-reset",
  "signin",
  "oauth2-registration",
] as const;
export type TurnstileEndpoint = (typeof TURNSTILE_ENDPOINTS)[number];

export interface TurnstileConfig {
  secret: string;
  siteKey: string | null;
  endpoints: ReadonlySet<TurnstileEndpoint>;
  verifyUrl: string;
  hostnames: ReadonlySet<string>;
}

const seconds = (fallback: number) => z.coerce.number().int().positive().default(fallback);

const url = z.url({ protocol: /^https?$/ }).transform((v) => v.replace(/\/+$/, ""));

/**
 * Claim names the service sets itself (`x-hasura-<name>`, contract §5.1, organizations §1). A custom claim with one
 * of these names would put a value of the user's choosing where the service's own decision belongs: `auth-elevated`
 * mapped to `id` forged elevation on every token. A name given with its `x-hasura-` prefix counts the same.
 */
const RESERVED_CLAIMS = [
  "user-id",
  "default-role",
  "allowed-roles",
  "user-is-anonymous",
  "auth-elevated",
  "role",
  "org-id",
  "org-role",
];

/**
 * A path of `AUTH_JWT_CUSTOM_CLAIMS` (Nhost's syntax, src/auth/custom-claims.ts): GraphQL field names joined by dots,
 * each optionally marked `[]` (or `[*]`) as an array or `[2]` for one element; after `metadata` any JSON key. JSONPath
 * filters are refused.
 */
const claimPathOk = (path: string) => {
  let inMetadata = false;
  return path.split(".").every((part) => {
    const ok = (inMetadata ? /^[^\s[\]]+(\[(\*|\d+)?\])?$/ : /^[_A-Za-z]\w*(\[(\*|\d+)?\])?$/).test(part);
    inMetadata ||= part.replace(/\[.*\]$/, "") === "metadata";
    return ok;
  });
};

const customClaims = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (!v) return {} as Record<string, string>;
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch {}
    const result = z.record(z.string(), z.string()).safeParse(parsed);
    if (!result.success) {
      ctx.addIssue({ code: "custom", message: "must be a JSON object of claim name to user path" });
      return z.NEVER;
    }
    const reserved = Object.keys(result.data).filter((name) =>
      RESERVED_CLAIMS.includes(name.toLowerCase().replace(/^x-hasura-/, "")),
    );
    if (reserved.length > 0) {
      ctx.addIssue({
        code: "custom",
        message: `claim names reserved by the service: ${reserved.join(", ")}`,
      });
      return z.NEVER;
    }
    const bad = Object.entries(result.data).filter(
      ([name, path]) => !/^\S+$/.test(name) || !claimPathOk(path),
    );
    if (bad.length > 0) {
      ctx.addIssue({
        code: "custom",
        message: `unsupported claim name or path (fields joined by dots, \`[]\` for arrays, no filters): ${bad.map(([name]) => name).join(", ")}`,
      });
      return z.NEVER;
    }
    return result.data;
  });

/** `AUTH_JWT_CUSTOM_CLAIMS_DEFAULTS`: a JSON object of claim name to the value its path yields nothing for. */
const customClaimDefaults = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (!v) return {} as Record<string, unknown>;
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch {}
    const result = z.record(z.string(), z.unknown()).safeParse(parsed);
    if (!result.success) {
      ctx.addIssue({ code: "custom", message: "must be a JSON object of claim name to value" });
      return z.NEVER;
    }
    return result.data;
  });

export const configSchema = z.object({
  AUTH_API_PREFIX: z
    .string()
    .regex(/^\/[\w/-]*\/v1$/, "must start with / and end with /v1")
    .default("/auth/v1"),
  AUTH_SERVER_URL: url.default("http://localhost:8787/auth/v1"),
  /** Public origin of the storage API; presigned URLs start with it. */
  STORAGE_SERVER_URL: url.default("http://localhost:8787"),
  /** Key of the presigned-URL signatures; derived from AUTH_ENCRYPTION_KEY when unset. */
  STORAGE_PRESIGN_SECRET: z.string().min(32).optional(),
  STORAGE_API_PREFIX: z
    .string()
    .regex(/^\/[\w/-]*\/v1$/, "must start with / and end with /v1")
    .default("/storage/v1"),
  /**
   * Who decides what a caller may do with a file (contract move-in §5.1b): `rules`, each bucket's own rules (storage
   * contract §4); or `hasura`, the app's Hasura permissions on `storage.files`, asked as Nhost Storage asks them.
   */
  STORAGE_PERMISSIONS: z.enum(["rules", "hasura"]).default("rules"),
  AUTH_CLIENT_URL: url.default("http://localhost:3000"),
  AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: list(),
  AUTH_ACCESS_CONTROL_ALLOWED_EMAILS: list(),
  AUTH_ACCESS_CONTROL_ALLOWED_EMAIL_DOMAINS: list(),
  AUTH_ACCESS_CONTROL_BLOCKED_EMAILS: list(),
  AUTH_ACCESS_CONTROL_BLOCKED_EMAIL_DOMAINS: list(),
  AUTH_CORS_ORIGINS: list(),
  AUTH_DISABLE_SIGNUP: bool(false),
  AUTH_DISABLE_NEW_USERS: bool(false),
  AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: bool(true),
  AUTH_PASSWORD_MIN_LENGTH: z.coerce.number().int().min(3).max(50).default(9),
  AUTH_USER_DEFAULT_ROLE: z.string().min(1).default("user"),
  AUTH_USER_DEFAULT_ALLOWED_ROLES: list(["user", "me"]),
  AUTH_LOCALE_DEFAULT: z.string().min(2).max(3).default("en"),
  /**
   * What a user's `locale` may be (Nhost's meaning), and so which languages their mails can speak. Default: every
   * shipped language (Nhost's was `en`, when it shipped English only: docs/decisions.md "Languages").
   */
  AUTH_LOCALE_ALLOWED_LOCALES: list([...LANGUAGES]),
  /**
   * The languages the pages and mails speak (contract §13), among the shipped ones; the first is the fallback.
   * Default: every shipped language, English first.
   */
  AUTH_UI_LOCALES: list([...LANGUAGES]).pipe(z.array(z.enum(LANGUAGES)).min(1)),
  /** Per-account lockout (contract §13): failures of one factor within the window that lock it. */
  AUTH_LOCKOUT_THRESHOLD: z.coerce.number().int().min(3).max(1000).default(10),
  AUTH_LOCKOUT_WINDOW: seconds(3600),
  /** The brand of the pages and mails (contract §13); the console's setting, when made, wins over these. */
  // The same rules as the console's and the admin API's (src/lib/brand.ts): https logos only, #rrggbb colours.
  AUTH_BRAND_NAME: brandNameSchema.optional(),
  AUTH_BRAND_LOGO_URL: brandLogoUrlSchema.optional(),
  AUTH_BRAND_COLOR: brandColourSchema("#1a73e8").optional(),
  AUTH_BRAND_COLOR_DARK: brandColourSchema("#8ab4f8").optional(),
  AUTH_ACCESS_TOKEN_EXPIRES_IN: seconds(900).refine(
    (n) => n > 60,
    "must be above 60 (the client refreshes at 60 s)",
  ),
  AUTH_REFRESH_TOKEN_EXPIRES_IN: seconds(2_592_000),
  AUTH_REFRESH_TOKEN_REUSE_INTERVAL: z.coerce.number().int().min(0).max(300).default(10),
  /** Days the audit log keeps an event (contract §10); the daily cron prunes older ones. */
  AUTH_AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  AUTH_JWT_PRIVATE_KEYS: z.string().optional(),
  HASURA_GRAPHQL_JWT_SECRET: z
    .string()
    .optional()
    .refine(
      (v) => !v || !/"type"\s*:\s*"HS(256|384|512)"/.test(v),
      "is this service's own signing key (RS256 or Ed25519); an HS256 secret from Nhost goes in AUTH_IMPORTED_JWT_SECRET, which accepts the old project's tokens for a while after the cut-over (docs/migrating-from-nhost.md)",
    ),
  /**
   * The old Nhost project's JWT secret (contract move-in §3): its tokens are accepted, read-only, under the recorded
   * cut-over's rules (src/http/imported-tokens.ts); it never signs.
   */
  AUTH_IMPORTED_JWT_SECRET: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (!v) return null;
      const parsed = parseImportedJwtSecret(v);
      if (typeof parsed === "string") {
        ctx.addIssue({ code: "custom", message: parsed });
        return z.NEVER;
      }
      return parsed;
    }),
  /**
   * The longest an old system's access token may have been issued for (`exp − iat`, seconds; contract supabase.md
   * §6): longer ones are refused, and the cut-over plus this is when the old system's secrets stop working at all.
   */
  AUTH_IMPORTED_JWT_MAX_LIFETIME: z.coerce
    .number({ error: "must be a number of seconds (default 3600)" })
    .int("must be a whole number of seconds")
    .positive("must be a positive number of seconds")
    .max(
      86_400,
      "must be at most 86400 (one day): the old system's tokens stop working that long after the cut-over",
    )
    .default(3600),
  AUTH_JWT_CUSTOM_CLAIMS: customClaims,
  /** Custom claims from the app's data (contract move-in §4, src/auth/token-claims.ts). */
  AUTH_JWT_CUSTOM_CLAIMS_DEFAULTS: customClaimDefaults,
  /** `fail`: no token when the claims query fails (503); `omit` (Nhost's): the token without custom claims. */
  AUTH_JWT_CUSTOM_CLAIMS_ON_ERROR: z.enum(["fail", "omit"]).default("fail"),
  HASURA_GRAPHQL_GRAPHQL_URL: url.optional(),
  HASURA_GRAPHQL_ADMIN_SECRET: z.string().min(1).optional(),
  /**
   * The event stream's first retry delay in seconds, doubled per attempt up to 12 hours (src/events/retry.ts). The
   * default spans more than 24 hours over wrangler.toml's 16 retries; a smaller value shortens every wait.
   */
  /**
   * The D1 bindings users are spread over (src/db/shards.ts, docs/scaling.md "Past one D1 database"), the home
   * database `DB` first: it keeps the global tables and the directory. One (the default) is no sharding at all.
   * A power of two splits the 4,096 slots evenly. Changing the list of a deployment with users moves rows: see
   * docs/scaling.md before doing it.
   */
  AUTH_D1_SHARDS: list(["DB"]).pipe(
    z
      .array(z.string().regex(/^[A-Z][A-Z0-9_]*$/, "binding names are upper-case"))
      .min(1)
      .max(4096)
      .refine((names) => names[0] === "DB", "the first shard must be DB, the home database")
      .refine((names) => new Set(names).size === names.length, "a binding is named twice"),
  ),
  /** 0 (retry at once, the test suite's) is heeded only where the server is local: elsewhere it is the default. */
  AUTH_EVENTS_RETRY_DELAY_SECONDS: z.coerce.number().int().min(0).max(3600).default(10),
  AUTH_ENCRYPTION_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, "must be 32 bytes as 64 hex characters")
    .optional(),
  AUTH_ADMIN_SECRET: z.string().min(16).optional(),
  /** The OAuth 2.0 / OpenID Connect authorization server (contract §3.5); clients are managed through §10. */
  AUTH_OAUTH2_PROVIDER_ENABLED: bool(false),
  AUTH_OAUTH2_PROVIDER_LOGIN_URL: url.optional(),
  /** Defaults of a new client's token lifetimes, in seconds. */
  AUTH_OAUTH2_PROVIDER_ACCESS_TOKEN_TTL: seconds(900).refine(
    (n) => n >= 60 && n <= 86_400,
    "must be 60 to 86400",
  ),
  AUTH_OAUTH2_PROVIDER_REFRESH_TOKEN_TTL: seconds(2_592_000).refine(
    (n) => n >= 60 && n <= 31_536_000,
    "must be 60 to 31536000",
  ),
  /**
   * Dynamic client registration (RFC 7591, contract §3.6): `off`, `authenticated` (a signed-in user registers clients
   * of their own) or `open` (anyone: what MCP hosts and CLIs meeting the server for the first time need).
   */
  AUTH_OAUTH2_PROVIDER_REGISTRATION: z.enum(["off", "authenticated", "open"]).default("off"),
  /** Seconds a client registered without an admin may go unused before the daily cron deletes it (90 days). */
  AUTH_OAUTH2_PROVIDER_REGISTRATION_TTL: seconds(7_776_000),
  /** The resources (RFC 8707) tokens may be bound to; empty: the storage API's URL. */
  AUTH_OAUTH2_PROVIDER_RESOURCES: list(),
  /**
   * Client ID metadata documents (contract §3.6): `on` or `off`; unset: on exactly where registration is `open`, since
   * a document is a registration by another name (resolved in getConfig).
   */
  AUTH_OAUTH2_PROVIDER_CLIENT_ID_DOCUMENTS: z.enum(["on", "off"]).optional(),
  /** RFC 9126 §5: every client's authorization requests must come through PAR (per client: its own switch). */
  AUTH_OAUTH2_PROVIDER_REQUIRE_PAR: bool(false),
  /** RFC 9449 §8: the token endpoint asks for a server nonce in DPoP proofs (`use_dpop_nonce`). */
  AUTH_OAUTH2_PROVIDER_DPOP_NONCE: bool(false),
  /**
   * Organizations (contract organizations.md §1): member roles beyond `owner`, `admin` and `member`, comma-separated
   * (lower-case letters, digits, `-` and `_`).
   */
  AUTH_ORG_ROLES: list().pipe(
    z.array(z.string().regex(/^[a-z0-9_-]{1,40}$/, "role names are lower-case letters, digits, - and _")),
  ),
  /** DNS-over-HTTPS (JSON API) that verifies an organization's email domain by its TXT record (organizations.md §2). */
  AUTH_DNS_RESOLVER_URL: url.default("https://cloudflare-dns.com/dns-query"),
  /**
   * Outbound URLs (contract §1): loopback hosts, over http too, for URLs the service fetches on someone else's say-so;
   * heeded only while AUTH_SERVER_URL is itself local (development and tests), ignored anywhere else.
   */
  AUTH_OUTBOUND_ALLOW_LOCAL: bool(false),
  AUTH_DEV_MAILBOX: bool(false),
  /** The test suite's password-hash cost (`cheap`, src/lib/password.ts); heeded only where the server is local. */
  TEST_PASSWORD_HASH: z.enum(["cheap"]).optional(),
  AUTH_ANONYMOUS_USERS_ENABLED: bool(false),
  AUTH_EMAIL_PASSWORDLESS_ENABLED: bool(false),
  AUTH_OTP_EMAIL_ENABLED: bool(false),
  AUTH_CONCEAL_ERRORS: bool(false),
  AUTH_SMS_PASSWORDLESS_ENABLED: bool(false),
  AUTH_SMS_PROVIDER: z.enum(["twilio"]).optional(),
  AUTH_SMS_TWILIO_ACCOUNT_SID: z.string().optional(),
  AUTH_SMS_TWILIO_AUTH_TOKEN: z.string().optional(),
  /** A messaging service SID (`MG…`) or a sender number in E.164. */
  AUTH_SMS_TWILIO_MESSAGING_SERVICE_ID: z.string().optional(),
  AUTH_DEV_SMS: bool(false),
  AUTH_WEBAUTHN_ENABLED: bool(false),
  /** Defaults to the host of AUTH_CLIENT_URL (resolved in getConfig). */
  AUTH_WEBAUTHN_RP_ID: z.string().min(1).optional(),
  AUTH_WEBAUTHN_RP_NAME: z.string().min(1).default("edge-auth"),
  /** Defaults to the origin of AUTH_CLIENT_URL. */
  AUTH_WEBAUTHN_RP_ORIGINS: list(),
  AUTH_REQUIRE_ELEVATED_CLAIM: z.enum(["disabled", "recommended", "required"]).default("disabled"),
  AUTH_MFA_ENABLED: bool(false),
  AUTH_MFA_TOTP_ISSUER: z.string().min(1).max(100).default("edge-auth"),
  /** Cloudflare Turnstile (contract §9): when the secret is set, the endpoints listed require a passed challenge. */
  AUTH_TURNSTILE_SECRET: z.string().min(1).optional(),
  AUTH_TURNSTILE_SITE_KEY: z.string().min(1).optional(),
  AUTH_TURNSTILE_ENDPOINTS: list(["signup"]).pipe(z.array(z.enum(TURNSTILE_ENDPOINTS))),
  AUTH_TURNSTILE_VERIFY_URL: url.default("https://challenges.cloudflare.com/turnstile/v0/siteverify"),
  /** Hostnames a challenge may have been solved on; default: those of the server, the client URL and CORS origins. */
  AUTH_TURNSTILE_HOSTNAMES: list(),
  AUTH_PASSWORD_HIBP_ENABLED: bool(false),
  AUTH_PASSWORD_HIBP_URL: url.default("https://api.pwnedpasswords.com/range"),
  // Off by default (a decision, docs/decisions.md): a Gravatar URL publishes an unsalted hash of the email.
  AUTH_GRAVATAR_ENABLED: bool(false),
  AUTH_GRAVATAR_DEFAULT: z
    .enum(["blank", "identicon", "monsterid", "wavatar", "retro", "robohash", "mp", "404"])
    .default("blank"),
  AUTH_GRAVATAR_RATING: z.enum(["g", "pg", "r", "x"]).default("g"),
  AUTH_EMAIL_TEMPLATES: z.string().optional(),
  AUTH_SMTP_HOST: z.string().optional(),
  AUTH_SMTP_PORT: z.coerce.number().int().min(1).max(65535).default(587),
  AUTH_SMTP_USER: z.string().optional(),
  AUTH_SMTP_PASS: z.string().optional(),
  AUTH_SMTP_SENDER: z.string().optional(),
  AUTH_SMTP_SECURE: bool(false),
  // The reference also accepts CRAM-MD5; worker-mailer's CRAM-MD5 cannot parse a real server's challenge, and the
  // method is obsolete next to PLAIN over TLS (RFC 8314), so it is refused here rather than failing at the first mail.
  AUTH_SMTP_AUTH_METHOD: z
    .enum(["PLAIN", "LOGIN", "plain", "login"], "must be PLAIN or LOGIN")
    .default("PLAIN")
    .transform((v) => v.toLowerCase() as "plain" | "login"),
});

export type Config = z.output<typeof configSchema> & {
  /** Allowed roles always contain the default role (contract §2). */
  defaultAllowedRoles: string[];
  rateLimits: RateLimitConfig;
  /** External identity providers (contract §7). */
  providers: ProvidersConfig;
  /** `AUTH_SMTP_SENDER` parsed; null when unset. Every production transport sends from it. */
  mailSender: MailAddress | null;
  /** The built-in mail templates with `AUTH_EMAIL_TEMPLATES` applied. */
  mailTemplates: Catalog;
  /** The WebAuthn relying party: id (a domain) and the origins whose ceremonies are accepted. */
  webauthn: { rpId: string; rpName: string; origins: string[] };
  /** Cloudflare Turnstile, when `AUTH_TURNSTILE_SECRET` is set; null otherwise. */
  turnstile: TurnstileConfig | null;
  /** The resources OAuth2 tokens may be bound to (RFC 8707), `AUTH_OAUTH2_PROVIDER_RESOURCES` or the storage API. */
  oauth2Resources: string[];
  /** `AUTH_OAUTH2_PROVIDER_CLIENT_ID_DOCUMENTS` resolved: whether an https `client_id` names a metadata document. */
  oauth2ClientIdDocuments: boolean;
  /** `AUTH_OUTBOUND_ALLOW_LOCAL` where it counts: set, and `AUTH_SERVER_URL` local (src/lib/outbound-url.ts). */
  outboundAllowLocal: boolean;
  /** The app's synchronous hooks, `AUTH_HOOK_<NAME>_URL` and `_SECRET` (src/hooks/config.ts); unset ones absent. */
  hooks: HooksConfig;
  /**
   * Where mailed links and other flows send the browser when the request named no `redirectTo`: `AUTH_CLIENT_URL`,
   * except on a development server where `AUTH_CLIENT_URL` was never set (no app runs at its default yet): there,
   * the service's own landing page (`/dev/landing`), which says what happened and what an app would receive.
   */
  defaultRedirectUrl: string;
  /** argon2id's cost for new hashes: the production parameters, or the test suite's (`TEST_PASSWORD_HASH`). */
  passwordHashCost: Argon2Cost;
};

export interface MailAddress {
  name?: string;
  email: string;
}

/** `noreply@example.com` or `Example <noreply@example.com>` (the reference's two forms). */
function parseSender(value: string | undefined): MailAddress | null {
  if (!value) return null;
  const named = /^\s*"?([^"<>]*?)"?\s*<([^<>\s]+@[^<>\s]+)>\s*$/.exec(value);
  const email = named ? named[2]! : value.trim();
  if (!z.email().safeParse(email).success) {
    throw new ConfigError("invalid configuration: AUTH_SMTP_SENDER must be an address or Name <address>");
  }
  return named?.[1] ? { name: named[1], email } : { email };
}

/** SMS sign-in needs a way to send: the app's SEND_SMS hook, the development store or a provider with credentials. */
function checkSmsTransport(data: z.output<typeof configSchema>, hooks: HooksConfig) {
  if (data.AUTH_SMS_PROVIDER === "twilio") {
    for (const name of [
      "AUTH_SMS_TWILIO_ACCOUNT_SID",
      "AUTH_SMS_TWILIO_AUTH_TOKEN",
      "AUTH_SMS_TWILIO_MESSAGING_SERVICE_ID",
    ] as const) {
      if (!data[name])
        throw new ConfigError(`invalid configuration: ${name} must be set with AUTH_SMS_PROVIDER`);
    }
  } else if (data.AUTH_SMS_PASSWORDLESS_ENABLED && !data.AUTH_DEV_SMS && !hooks.SEND_SMS) {
    throw new ConfigError(
      "invalid configuration: AUTH_SMS_PASSWORDLESS_ENABLED needs AUTH_SMS_PROVIDER, AUTH_HOOK_SEND_SMS_URL (or AUTH_DEV_SMS in development)",
    );
  }
}

/** Mail settings that only make sense together: a half-configured transport fails here, not at the first mail. */
function checkMailTransport(env: object, data: z.output<typeof configSchema>, sender: MailAddress | null) {
  if ("EMAIL" in env && env.EMAIL && !sender) {
    throw new ConfigError("invalid configuration: AUTH_SMTP_SENDER must be set with the EMAIL binding");
  }
  if (!data.AUTH_SMTP_HOST) return;
  if (!sender)
    throw new ConfigError("invalid configuration: AUTH_SMTP_SENDER must be set with AUTH_SMTP_HOST");
  if (data.AUTH_SMTP_USER && data.AUTH_SMTP_PASS === undefined) {
    throw new ConfigError("invalid configuration: AUTH_SMTP_PASS must be set with AUTH_SMTP_USER");
  }
}

/** Hosts a development transport may run on: the developer's own machine. */
function isLocalHost(url: string): boolean {
  return isLoopbackHost(new URL(url).hostname);
}

/**
 * The development transports keep every mail and SMS readable by anyone at `/dev/mailbox` and `/dev/sms`: a
 * production deployment with one of them switched on would hand out every sign-in link and code. They only start
 * where the service itself is local.
 */
function checkDevelopmentTransports(data: z.output<typeof configSchema>) {
  for (const name of ["AUTH_DEV_MAILBOX", "AUTH_DEV_SMS"] as const) {
    if (data[name] && !isLocalHost(data.AUTH_SERVER_URL)) {
      throw new ConfigError(
        `invalid configuration: ${name} is for development only and AUTH_SERVER_URL (${data.AUTH_SERVER_URL}) is not local`,
      );
    }
  }
}

/**
 * `STORAGE_PERMISSIONS=hasura` asks the app's Hasura about every file: it needs the endpoint, and the admin secret
 * for what Nhost Storage also does as the admin (completing an upload's row, undoing a half-done one). Hasura runs
 * JWT mode only with an admin secret, so a Hasura that checks the service's tokens has one.
 */
function checkStoragePermissions(data: z.output<typeof configSchema>) {
  if (data.STORAGE_PERMISSIONS !== "hasura") return;
  for (const name of ["HASURA_GRAPHQL_GRAPHQL_URL", "HASURA_GRAPHQL_ADMIN_SECRET"] as const) {
    if (!data[name]) {
      throw new ConfigError(
        `invalid configuration: STORAGE_PERMISSIONS=hasura needs ${name} (the app's Hasura, whose permissions on storage.files decide)`,
      );
    }
  }
}

/**
 * The resource indicators (RFC 8707) this deployment serves: `AUTH_OAUTH2_PROVIDER_RESOURCES`, or the storage API.
 * Absolute URIs without a fragment; compared as written (a trailing slash makes another resource).
 */
function oauth2Resources(data: z.output<typeof configSchema>): string[] {
  const listed =
    data.AUTH_OAUTH2_PROVIDER_RESOURCES.length > 0
      ? data.AUTH_OAUTH2_PROVIDER_RESOURCES
      : [`${data.STORAGE_SERVER_URL.replace(/\/$/, "")}${data.STORAGE_API_PREFIX}`];
  for (const resource of listed) {
    let url: URL | undefined;
    try {
      url = new URL(resource);
    } catch {}
    if (!url || url.hash || resource.includes("#")) {
      throw new ConfigError(
        `invalid configuration: AUTH_OAUTH2_PROVIDER_RESOURCES: ${resource} is not an absolute URI without a fragment`,
      );
    }
  }
  return [...new Set(listed)];
}

/**
 * Turnstile's settings. The verification URL may be http only on loopback (a local fake): anything else would send
 * the secret in clear. The hostnames a challenge may come from default to the hosts this deployment serves pages or
 * front-ends on.
 */
function turnstileSettings(data: z.output<typeof configSchema>): TurnstileConfig | null {
  if (!data.AUTH_TURNSTILE_SECRET) return null;
  if (
    new URL(data.AUTH_TURNSTILE_VERIFY_URL).protocol !== "https:" &&
    !isLocalHost(data.AUTH_TURNSTILE_VERIFY_URL)
  ) {
    throw new ConfigError(
      "invalid configuration: AUTH_TURNSTILE_VERIFY_URL must be https (http only on loopback, for a local fake)",
    );
  }
  const hostnames =
    data.AUTH_TURNSTILE_HOSTNAMES.length > 0
      ? data.AUTH_TURNSTILE_HOSTNAMES
      : [
          data.AUTH_SERVER_URL,
          data.AUTH_CLIENT_URL,
          ...data.AUTH_CORS_ORIGINS,
          ...data.AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS,
        ].flatMap((value) => {
          try {
            const { hostname } = new URL(value);
            return hostname && !hostname.includes("*") ? [hostname] : [];
          } catch {
            return [];
          }
        });
  return {
    secret: data.AUTH_TURNSTILE_SECRET,
    siteKey: data.AUTH_TURNSTILE_SITE_KEY ?? null,
    endpoints: new Set(data.AUTH_TURNSTILE_ENDPOINTS),
    verifyUrl: data.AUTH_TURNSTILE_VERIFY_URL,
    hostnames: new Set(hostnames.map((host) => host.toLowerCase())),
  };
}

/** The development landing page's path under the auth API (src/auth/dev/landing.ts). */
export const DEV_LANDING_PATH = "/dev/landing";

/** Whether the service runs on the developer's machine (its URL is loopback): development-only leniencies. */
export function isDevelopmentServer(config: Pick<Config, "AUTH_SERVER_URL">): boolean {
  return isLocalHost(config.AUTH_SERVER_URL);
}

const cache = new WeakMap<object, Config>();

export function getConfig(env: object): Config {
  const cached = cache.get(env);
  if (cached) return cached;
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  const data = parsed.data;
  if (!data.AUTH_JWT_PRIVATE_KEYS && !data.HASURA_GRAPHQL_JWT_SECRET) {
    throw new ConfigError(
      "invalid configuration: AUTH_JWT_PRIVATE_KEYS or HASURA_GRAPHQL_JWT_SECRET must be set",
    );
  }
  if (!data.AUTH_ENCRYPTION_KEY) {
    throw new ConfigError("invalid configuration: AUTH_ENCRYPTION_KEY must be set");
  }
  const mailSender = parseSender(data.AUTH_SMTP_SENDER);
  checkMailTransport(env, data, mailSender);
  const hooks = parseHooks(
    env as Record<string, unknown>,
    data.AUTH_OUTBOUND_ALLOW_LOCAL && isLocalHost(data.AUTH_SERVER_URL),
  );
  checkSmsTransport(data, hooks);
  checkDevelopmentTransports(data);
  checkStoragePermissions(data);
  const roles = data.AUTH_USER_DEFAULT_ALLOWED_ROLES;
  // The test suite's shortcuts never reach a deployment: cheap password hashes would fall to a stolen table thousands
  // of times faster, and retries at once would spend a message's 16 attempts in seconds.
  const testSuite = isLocalHost(data.AUTH_SERVER_URL);
  const config: Config = {
    ...data,
    AUTH_EVENTS_RETRY_DELAY_SECONDS:
      data.AUTH_EVENTS_RETRY_DELAY_SECONDS === 0 && !testSuite ? 10 : data.AUTH_EVENTS_RETRY_DELAY_SECONDS,
    defaultAllowedRoles: roles.includes(data.AUTH_USER_DEFAULT_ROLE)
      ? roles
      : [data.AUTH_USER_DEFAULT_ROLE, ...roles],
    rateLimits: parseRateLimits(env as Record<string, unknown>),
    providers: parseProviders(env as Record<string, unknown>),
    mailSender,
    mailTemplates: templateCatalog(data.AUTH_EMAIL_TEMPLATES),
    oauth2Resources: oauth2Resources(data),
    oauth2ClientIdDocuments: data.AUTH_OAUTH2_PROVIDER_CLIENT_ID_DOCUMENTS
      ? data.AUTH_OAUTH2_PROVIDER_CLIENT_ID_DOCUMENTS === "on"
      : data.AUTH_OAUTH2_PROVIDER_REGISTRATION === "open",
    outboundAllowLocal: data.AUTH_OUTBOUND_ALLOW_LOCAL && isLocalHost(data.AUTH_SERVER_URL),
    turnstile: turnstileSettings(data),
    hooks,
    passwordHashCost: data.TEST_PASSWORD_HASH === "cheap" && testSuite ? TEST_ARGON2_PARAMS : ARGON2_PARAMS,
    defaultRedirectUrl:
      isLocalHost(data.AUTH_SERVER_URL) && !(env as Record<string, unknown>).AUTH_CLIENT_URL
        ? `${data.AUTH_SERVER_URL.replace(/\/$/, "")}${DEV_LANDING_PATH}`
        : data.AUTH_CLIENT_URL,
    webauthn: {
      rpId: data.AUTH_WEBAUTHN_RP_ID ?? new URL(data.AUTH_CLIENT_URL).hostname,
      rpName: data.AUTH_WEBAUTHN_RP_NAME,
      origins:
        data.AUTH_WEBAUTHN_RP_ORIGINS.length > 0
          ? data.AUTH_WEBAUTHN_RP_ORIGINS
          : [new URL(data.AUTH_CLIENT_URL).origin],
    },
  };
  cache.set(env, config);
  return config;
}
