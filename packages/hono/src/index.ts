// @edge-auth/hono: the signed-in user and "may they do that" for a Hono app, from the auth service — through a
// service binding on Cloudflare, through its JWKS and AuthZEN API elsewhere (docs/workers.md ("The Hono package and the example")).
export type { AuthClient, Identity } from "./client.js";
export type { ClientCredentials } from "./client-credentials.js";
export { EdgeAuthError, isFailure } from "./errors.js";
export {
  type AuthEnv,
  type AuthOptions,
  type AuthVariables,
  auth,
  type BindingOptions,
  requirePermission,
  requireUser,
} from "./middleware.js";
export type { RemoteOptions } from "./remote.js";
export type * from "./service.js";
