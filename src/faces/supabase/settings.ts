import { z } from "zod";
import type { CoreConfig, FeatureSettingsSlice } from "../../config";
import { ConfigError } from "../../errors";
import { parseImportedSupabaseSecret } from "../../lib/imported-supabase-tokens";
import { checkOutboundUrl, outboundPolicy } from "../../lib/outbound-url";
import { bool, list, settingsSlice, url } from "../../settings/kit";

/** The Supabase face (contract supabase.md §1): on or off, and the API keys its callers send as `apikey`. */
const vars = z.object({
  AUTH_SUPABASE_API_ENABLED: bool(false),
  /** Keys of client calls (`sb_publishable_…`), comma-separated; `npm start` generates one. */
  AUTH_SUPABASE_PUBLISHABLE_KEYS: list(),
  /** Keys that confer the service role (`sb_secret_…`), comma-separated; the admin secret does too. */
  AUTH_SUPABASE_SECRET_KEYS: list(),
  /** The Supabase project (or self-hosted PostgREST / Realtime) the data calls are forwarded to (contract §4). */
  AUTH_SUPABASE_UPSTREAM_URL: url.optional(),
  /** That project's JWT secret: the exchanged tokens are signed HS256 with its raw UTF-8 bytes, as GoTrue does. */
  AUTH_SUPABASE_UPSTREAM_JWT_SECRET: z.string().optional(),
  /** That project's anon key, sent upstream as `apikey` in place of the face's own keys. */
  AUTH_SUPABASE_UPSTREAM_ANON_KEY: z.string().optional(),
  /**
   * The old Supabase project's JWT secret (raw UTF-8, as GoTrue uses it) or its JWKS, after a move (contract §5–6):
   * its users' access tokens are accepted, read-only, under the recorded cut-over's rules; the service never signs.
   */
  AUTH_IMPORTED_SUPABASE_JWT_SECRET: z.string().optional(),
  /** The old project's issuer: `<old project URL>/auth/v1`. */
  AUTH_IMPORTED_SUPABASE_ISSUER: url.optional(),
});

/** The old project's key and issuer, or null; one without the other is a mistake, said at start. */
function importedOf(data: z.output<typeof vars>) {
  const { AUTH_IMPORTED_SUPABASE_JWT_SECRET: secret, AUTH_IMPORTED_SUPABASE_ISSUER: issuer } = data;
  if (!secret && !issuer) return null;
  if (!secret || !issuer) {
    throw new ConfigError(
      "invalid configuration: AUTH_IMPORTED_SUPABASE_JWT_SECRET and AUTH_IMPORTED_SUPABASE_ISSUER go together (the old project's JWT secret or JWKS, and <old project URL>/auth/v1)",
    );
  }
  const parsed = parseImportedSupabaseSecret(secret);
  if (typeof parsed === "string")
    throw new ConfigError(`invalid configuration: AUTH_IMPORTED_SUPABASE_JWT_SECRET ${parsed}`);
  return { secret: parsed, issuer };
}

/** RFC 7518 §3.2: an HS256 key of at least 256 bits (Supabase's project secrets are 40 characters or more). */
const MIN_SECRET_LENGTH = 32;

/** The upstream of the data calls, or null: a URL needs its secret and passes the outbound-URL policy. */
function upstreamOf(data: z.output<typeof vars>, core: CoreConfig) {
  const { AUTH_SUPABASE_UPSTREAM_URL: base, AUTH_SUPABASE_UPSTREAM_JWT_SECRET: secret } = data;
  if (!base) {
    if (secret || data.AUTH_SUPABASE_UPSTREAM_ANON_KEY) {
      throw new ConfigError(
        "invalid configuration: AUTH_SUPABASE_UPSTREAM_JWT_SECRET and AUTH_SUPABASE_UPSTREAM_ANON_KEY need AUTH_SUPABASE_UPSTREAM_URL",
      );
    }
    return null;
  }
  if (!secret || secret.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(
      `invalid configuration: AUTH_SUPABASE_UPSTREAM_URL needs AUTH_SUPABASE_UPSTREAM_JWT_SECRET, the project's JWT secret (at least ${MIN_SECRET_LENGTH} characters)`,
    );
  }
  // The operator names it, but the forward sends users' signed tokens there: never to the service itself or, outside
  // a developer's machine, to a local or plain-http host.
  const verdict = checkOutboundUrl(base, outboundPolicy(core));
  if (!verdict.ok)
    throw new ConfigError(`invalid configuration: AUTH_SUPABASE_UPSTREAM_URL: ${verdict.reason}`);
  return { url: base, jwtSecret: secret, anonKey: data.AUTH_SUPABASE_UPSTREAM_ANON_KEY || null };
}

const KEY_SHAPE = {
  publishable: /^sb_publishable_[A-Za-z0-9_-]{16,}$/,
  secret: /^sb_secret_[A-Za-z0-9_-]{16,}$/,
};

const resolve = (data: z.output<typeof vars>, core: CoreConfig) => {
  const bad = [
    ...data.AUTH_SUPABASE_PUBLISHABLE_KEYS.filter((key) => !KEY_SHAPE.publishable.test(key)),
    ...data.AUTH_SUPABASE_SECRET_KEYS.filter((key) => !KEY_SHAPE.secret.test(key)),
  ];
  if (bad.length > 0) {
    throw new ConfigError(
      "invalid configuration: AUTH_SUPABASE_PUBLISHABLE_KEYS holds sb_publishable_… keys and AUTH_SUPABASE_SECRET_KEYS sb_secret_… keys (at least 16 characters after the prefix)",
    );
  }
  if (data.AUTH_SUPABASE_API_ENABLED && data.AUTH_SUPABASE_PUBLISHABLE_KEYS.length === 0) {
    throw new ConfigError(
      "invalid configuration: AUTH_SUPABASE_API_ENABLED needs AUTH_SUPABASE_PUBLISHABLE_KEYS (the key supabase-js is created with)",
    );
  }
  return {
    supabase: {
      enabled: data.AUTH_SUPABASE_API_ENABLED,
      publishableKeys: data.AUTH_SUPABASE_PUBLISHABLE_KEYS,
      secretKeys: data.AUTH_SUPABASE_SECRET_KEYS,
      upstream: upstreamOf(data, core),
      imported: importedOf(data),
    },
  };
};

export const supabaseSettings: FeatureSettingsSlice = settingsSlice(vars, resolve);

type SupabaseSettings = ReturnType<typeof resolve>;
declare module "../../config" {
  interface FeatureSettings extends SupabaseSettings {}
}
