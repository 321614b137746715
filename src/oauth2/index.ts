/**
 * What the rest of the service may use of the OAuth2 authorization server (the admin API mounts its client routes,
 * the console manages clients, the queue handler runs back-channel logout). Everything else in src/oauth2/ is
 * internal to it (.dependency-cruiser.cjs).
 */

// The account center's demand for a recent sign-in (src/account-center/recent-auth.ts) is a step-up level.
export { LEVEL } from "../browser/acr";
// The house of the built-in pages (contract §13): the account center (src/account-center/) renders in it, checks its
// form posts and limits as the page does, and re-authenticates with the page's proofs and step.
export { rateLimited } from "../browser/checks";
export { render } from "../browser/page-response";
export { catalogueFor, pageText } from "../browser/page-text";
// The page's sign-in: read by the account center, raised by its re-authentication, ended by its sign-out.
export {
  type BrowserSession,
  endBrowserSession,
  raiseBrowserSession,
  readBrowserSession,
} from "../browser/session";
export { type AuthDemand, judge, stepUpMethods } from "../browser/step-up";
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
// Back-channel logout (src/runtime/consumers.ts): the event stream's consumer that finds whom to tell, the queue's that tells.
export { backchannelLogoutFanOut, deliverLogoutTokens } from "./logout";
export { isSameOrigin } from "./page/form-requests";
export { abilitiesOf, provePasskey, provePassword, proveTotp } from "./page/reauth-proofs";
export { reauthForm } from "./page/reauth-render";
export { reauthPasskeyScript } from "./page/reauth-script";
// The account center's linked providers name them as the sign-in page's buttons do.
export { providerName } from "./page/sign-in-pages";
export { signInMessage } from "./page/sign-in-routes";
