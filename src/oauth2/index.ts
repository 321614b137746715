/**
 * What the rest of the service may use of the OAuth2 authorization server (the admin API mounts its client routes,
 * the console manages clients, the queue handler runs back-channel logout). Everything else in src/oauth2/ is
 * internal to it (.dependency-cruiser.cjs).
 */
export {
  type ClientBody,
  type ClientConsent,
  type ClientGrant,
  clientBodySchema,
  clientUsage,
  createClient,
  deleteClient,
  getClient,
  listClients,
  oauth2ClientAdminRoutes,
  replaceClient,
  rotateClientSecret,
  SUPPORTED_SCOPES,
  type WireClient,
} from "./clients";
// Back-channel logout (src/consumers.ts): the event stream's consumer that finds whom to tell, the queue's that tells.
export { backchannelLogoutFanOut, deliverLogoutTokens } from "./logout";
