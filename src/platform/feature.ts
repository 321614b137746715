/**
 * The service binding (contract platform.md §1, docs/workers.md): the app's own Workers authenticate through the
 * `AuthService` entrypoint (src/runtime/entrypoints/), which runs this folder's functions. No routes: its door is
 * RPC, not HTTP.
 */
export const platformFeature = {
  name: "platform",
};
