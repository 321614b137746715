import { platformSettings } from "./settings";

/**
 * The service binding (contract platform.md §1, docs/workers.md): the app's own Workers authenticate through the
 * `AuthService` entrypoint and an operator's Workers administer through `AuthAdmin` (src/runtime/entrypoints/), which
 * run this folder's functions. No routes: its door is RPC, not HTTP.
 */
export const platformFeature = {
  name: "platform",
  settings: platformSettings,
};
