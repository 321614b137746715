import type { Config } from "../../config";
import { supabaseFace } from "./app";
import { oldApiKeyAdminRoutes } from "./old-api-keys";
import { supabaseSettings } from "./settings";

/**
 * Supabase's face over the same core (contract supabase.md): GoTrue's API at `/supabase/auth/v1`, for apps built on
 * `@supabase/supabase-js`. Mounted only where `AUTH_SUPABASE_API_ENABLED` is on.
 */
export const supabaseFeature = {
  name: "faces/supabase",
  settings: supabaseSettings,
  routes: (config: Config) =>
    config.supabase.enabled ? { root: supabaseFace(config), admin: oldApiKeyAdminRoutes } : {},
};
