import { z } from "zod";
import type { FeatureSettingsSlice } from "../config";
import { settingsSlice } from "../settings/kit";
import { parseProviders } from "./config";

/**
 * External identity providers (contract §7): `AUTH_PROVIDER_<NAME>_…`, a family of variables read by prefix
 * (src/providers/config.ts), so the slice has no fixed variables of its own.
 */
const resolve = (_data: unknown, _core: unknown, env: Readonly<Record<string, unknown>>) => ({
  providers: parseProviders(env as Record<string, unknown>),
});

export const providerSettings: FeatureSettingsSlice = settingsSlice(z.object({}), resolve);

type ProviderSettingsSlice = ReturnType<typeof resolve>;
declare module "../config" {
  interface FeatureSettings extends ProviderSettingsSlice {}
}
