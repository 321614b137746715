import { z } from "zod";
import type { FeatureSettingsSlice } from "../../config";
import { ConfigError } from "../../errors";
import { bool, list, settingsSlice } from "../../settings/kit";

/** The Supabase face (contract supabase.md §1): on or off, and the API keys its callers send as `apikey`. */
const vars = z.object({
  AUTH_SUPABASE_API_ENABLED: bool(false),
  /** Keys of client calls (`sb_publishable_…`), comma-separated; `npm start` generates one. */
  AUTH_SUPABASE_PUBLISHABLE_KEYS: list(),
  /** Keys that confer the service role (`sb_secret_…`), comma-separated; the admin secret does too. */
  AUTH_SUPABASE_SECRET_KEYS: list(),
});

const KEY_SHAPE = {
  publishable: /^sb_publishable_[A-Za-z0-9_-]{16,}$/,
  secret: /^sb_secret_[A-Za-z0-9_-]{16,}$/,
};

const resolve = (data: z.output<typeof vars>) => {
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
    },
  };
};

export const supabaseSettings: FeatureSettingsSlice = settingsSlice(vars, resolve);

type SupabaseSettings = ReturnType<typeof resolve>;
declare module "../../config" {
  interface FeatureSettings extends SupabaseSettings {}
}
