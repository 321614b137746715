import { z } from "zod";
import type { FeatureSettingsSlice } from "../config";
import { settingsSlice } from "../settings/kit";
import { parseProviders } from "./config";
import { parseCustomProviders } from "./custom-config";

/**
 * External identity providers (contract §7): `AUTH_PROVIDER_<NAME>_…`, a family of variables read by prefix
 * (src/providers/config.ts), so the slice has no fixed variables of its own.
 */
const resolve = (_data: unknown, _core: unknown, env: Readonly<Record<string, unknown>>) => {
  const providers = parseProviders(env as Record<string, unknown>);
  // Custom ids never take a built-in name (./custom-config.ts), so neither list overwrites the other.
  Object.assign(providers.enabled, parseCustomProviders(env as Record<string, unknown>));
  return { providers };
};

export const providerSettings: FeatureSettingsSlice = settingsSlice(z.object({}), resolve);

type ProviderSettingsSlice = ReturnType<typeof resolve>;
declare module "../config" {
  interface FeatureSettings extends ProviderSettingsSlice {}
}
