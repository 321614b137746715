import { z } from "zod";
import type { FeatureSettingsSlice } from "../config";
import { bool, settingsSlice } from "../settings/kit";

/**
 * The service binding's one switch: `AuthAdmin` (an operator's powers over users and sessions, docs/workers.md)
 * answers only where the operator turned it on. Any Worker of the Cloudflare account can bind any entrypoint of this
 * one, so the powerful one stays closed until someone decides it should be open.
 */
const vars = z.object({ AUTH_ADMIN_BINDING_ENABLED: bool(false) });

const resolve = (data: z.output<typeof vars>) => ({
  platform: { adminBindingEnabled: data.AUTH_ADMIN_BINDING_ENABLED },
});

export const platformSettings: FeatureSettingsSlice = settingsSlice(vars, resolve);

type PlatformSettings = ReturnType<typeof resolve>;
declare module "../config" {
  interface FeatureSettings extends PlatformSettings {}
}
