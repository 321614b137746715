/**
 * The clients of the authorization server, as the rest of src/oauth2/ uses them: who a `client_id` names (a row of
 * `oauth2_clients`, or a client ID metadata document) and how it authenticates, its redirect URIs, its settings'
 * schema, and the routes that manage clients (RFC 7591/7592 registration, the admin API).
 */

export {
  createClient,
  deleteClient,
  getClient,
  listClients,
  replaceClient,
  rotateClientSecret,
  setClientVaultProviders,
  type WireClient,
} from "./admin-clients";
export { oauth2ClientAdminRoutes } from "./admin-routes";
export { CLIENT_ASSERTION_ALGORITHMS } from "./client-assertion";
export { authenticateClient, findOAuth2Client } from "./client-auth";
export { forgetOAuth2Client } from "./client-cache";
export {
  AUTH_METHODS,
  CIBA_GRANT,
  type ClientBody,
  clientBodySchema,
  GRANT_TYPES,
  SUPPORTED_SCOPES,
} from "./client-schema";
export { type ClientConsent, type ClientGrant, clientUsage, noteClientUse } from "./client-usage";
export { setAuthorizationDetailsTypes } from "./detail-types";
export { keepFetchedClient } from "./metadata-documents";
export { isLoopbackRedirect, isRegisteredRedirect } from "./redirect-uris";
export { registrationRoutes } from "./registration-routes";
