/**
 * What the rest of the service may use of the OAuth2 authorization server (the admin API mounts its client routes,
 * the console lists clients). Everything else in src/oauth2/ is internal to it (.dependency-cruiser.cjs).
 */
export { oauth2ClientAdminRoutes } from "./admin-routes";
export { listClients, type WireClient } from "./clients";
