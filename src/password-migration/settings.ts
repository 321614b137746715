import { z } from "zod";
import type { CoreConfig, FeatureSettingsSlice } from "../config";
import { ConfigError } from "../errors";
import { parseHook } from "../hooks/config";
import { bool, settingsSlice } from "../settings/kit";

/**
 * Lazy password migration (contract supabase.md §5): the app's `PASSWORD_MIGRATION` hook, a hook of move-in.md §5.3
 * (its URL and `whsec_` secret checked as the others', src/hooks/config.ts), and whether an email with no account
 * may be created by it.
 */
const vars = z.object({
  AUTH_HOOK_PASSWORD_MIGRATION_URL: z.string().optional(),
  AUTH_HOOK_PASSWORD_MIGRATION_SECRET: z.string().optional(),
  /** An unknown email calls the hook too, and a verified one becomes a user under the sign-up rules. */
  AUTH_HOOK_PASSWORD_MIGRATION_CREATE_USERS: bool(false),
});

const resolve = (data: z.output<typeof vars>, core: CoreConfig, env: Readonly<Record<string, unknown>>) => {
  const endpoint = parseHook(env, "PASSWORD_MIGRATION", core.outbound.allowLocal) ?? null;
  if (data.AUTH_HOOK_PASSWORD_MIGRATION_CREATE_USERS && !endpoint) {
    throw new ConfigError(
      "invalid configuration: AUTH_HOOK_PASSWORD_MIGRATION_CREATE_USERS needs AUTH_HOOK_PASSWORD_MIGRATION_URL and _SECRET",
    );
  }
  return {
    passwordMigration: {
      /** Null: the feature takes no part in any sign-in. */
      endpoint,
      createUsers: data.AUTH_HOOK_PASSWORD_MIGRATION_CREATE_USERS,
    },
  };
};

export const passwordMigrationSettings: FeatureSettingsSlice = settingsSlice(vars, resolve);

type PasswordMigrationSettings = ReturnType<typeof resolve>;
declare module "../config" {
  interface FeatureSettings extends PasswordMigrationSettings {}
}
