import { z } from "zod";
import type { CoreConfig, FeatureSettingsSlice } from "../config";
import { ConfigError } from "../errors";
import { settingsSlice } from "../settings/kit";

/** The storage API's own settings (storage contract; its URLs are the core's `urls.storage`). */
const vars = z.object({
  /** Key of the presigned-URL signatures; derived from AUTH_ENCRYPTION_KEY when unset. */
  STORAGE_PRESIGN_SECRET: z.string().min(32).optional(),
  /**
   * Who decides what a caller may do with a file (contract move-in §5.1b): `rules`, each bucket's own rules (storage
   * contract §4); or `hasura`, the app's Hasura permissions on `storage.files`, asked as Nhost Storage asks them.
   */
  STORAGE_PERMISSIONS: z.enum(["rules", "hasura"]).default("rules"),
});

/**
 * `STORAGE_PERMISSIONS=hasura` asks the app's Hasura about every file: it needs the endpoint, and the admin secret
 * for what Nhost Storage also does as the admin (completing an upload's row, undoing a half-done one). Hasura runs
 * JWT mode only with an admin secret, so a Hasura that checks the service's tokens has one.
 */
const resolve = (data: z.output<typeof vars>, core: CoreConfig) => {
  if (data.STORAGE_PERMISSIONS === "hasura") {
    for (const [name, value] of [
      ["HASURA_GRAPHQL_GRAPHQL_URL", core.hasura.graphqlUrl],
      ["HASURA_GRAPHQL_ADMIN_SECRET", core.hasura.adminSecret],
    ] as const) {
      if (!value) {
        throw new ConfigError(
          `invalid configuration: STORAGE_PERMISSIONS=hasura needs ${name} (the app's Hasura, whose permissions on storage.files decide)`,
        );
      }
    }
  }
  return { storage: { permissions: data.STORAGE_PERMISSIONS, presignSecret: data.STORAGE_PRESIGN_SECRET } };
};

export const storageSettings: FeatureSettingsSlice = settingsSlice(vars, resolve);

type StorageSettings = ReturnType<typeof resolve>;
declare module "../config" {
  interface FeatureSettings extends StorageSettings {}
}
