import type { Config } from "../config";

/**
 * What a Supabase user lacks that the core's user has (contract supabase.md §5): GoTrue has no Hasura roles and no
 * locale, so a user `import-supabase` sends without them gets the service's defaults, as a sign-up here would
 * (`AUTH_USER_DEFAULT_ROLE`, `AUTH_USER_DEFAULT_ALLOWED_ROLES`, `AUTH_LOCALE_DEFAULT`). The command does not know the
 * service's settings; the service does. A row of any other system passes untouched, to be checked as it is.
 */
export function withServiceDefaults(config: Config, input: unknown): unknown {
  if (typeof input !== "object" || input === null || (input as { system?: unknown }).system !== "supabase")
    return input;
  const row = input as Record<string, unknown>;
  return {
    ...row,
    defaultRole: row.defaultRole ?? config.roles.default,
    roles: row.roles ?? config.roles.allowed,
    locale: row.locale ?? config.locales.default,
  };
}
