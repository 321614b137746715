import { passwordMigrationSettings } from "./settings";
import { checkKeptPassword } from "./sign-in";

/**
 * Lazy password migration (contract supabase.md §5): a password sign-in of a user moved in without a hash (or, when
 * allowed, of an unknown email) asks the old system through the app's hook, once, and keeps the password hashed here.
 */
export const passwordMigrationFeature = {
  name: "password-migration",
  settings: passwordMigrationSettings,
  signInHooks: { keptPassword: checkKeptPassword },
};
