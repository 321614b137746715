/**
 * What the rest of the service may use of the OAuth2 authorization server (the admin API mounts its client routes,
 * the console manages clients, the queue handler runs back-channel logout). Everything else in src/oauth2/ is
 * internal to it (.dependency-cruiser.cjs).
 */

export { type BrowserSession, readBrowserSession } from "./browser-session";
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
// The house of the built-in pages (contract §13): the account center (src/account-center/) renders in it, reads the
// page's sign-in and re-authenticates with its proofs.
export { render } from "./page/page-response";
export { catalogueFor, pageText } from "./page/text";
