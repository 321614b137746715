/**
 * What the rest of the service may use of the OAuth2 authorization server (the admin API mounts its client routes,
 * the console manages clients). Everything else in src/oauth2/ is internal to it (.dependency-cruiser.cjs).
 */
export { oauth2ClientAdminRoutes } from "./admin-routes";
export { type ClientBody, clientBodySchema, SUPPORTED_SCOPES } from "./client-schema";
export { type ClientConsent, type ClientGrant, clientUsage } from "./client-usage";
export {
  createClient,
  deleteClient,
  getClient,
  listClients,
  replaceClient,
  rotateClientSecret,
  type WireClient,
} from "./clients";
