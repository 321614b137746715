/**
 * What the rest of the service may use of the OAuth2 authorization server (the admin API mounts its client routes,
 * the console manages clients, the queue handler runs back-channel logout). Everything else in src/oauth2/ is
 * internal to it (.dependency-cruiser.cjs).
 */

// RFC 9396: the consent page and the CIBA approval page show authorization details through their types' templates.
export {
  type AuthorizationDetail,
  type AuthorizationDetailsType,
  authorizationDetailsHtml,
  authorizationDetailsText,
  describeAuthorizationDetail,
} from "./authorization-details";
// OpenID CIBA: the account center lists the requests waiting for the user (their links open the approval page).
export { type WaitingApproval, waitingApprovals } from "./ciba";
// The interaction contract (contract §3.5): the built-in pages (src/pages/) read a pending request, open the requests
// they start themselves (a device's, an invitation's, an app's) and finish each through it, by the request's id, as an
// external login UI does; they see no pending-request storage, client row, consent or device-code row.
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
  setAuthorizationDetailsTypes,
  setClientVaultProviders,
  type WireClient,
} from "./clients";
export { OAuth2Error } from "./errors";
// FedCM's identity provider (src/fedcm/): the client a relying party names, its ID assertion as a code of this server.
export {
  consentedClients,
  type FedCmAsk,
  type FedCmClient,
  fedcmClient,
  forgetConsent,
  issueFedCmCode,
} from "./fedcm";
export type { Completer } from "./interaction";
export type { ClientFacts } from "./interaction-client-facts";
export {
  type AppReturn,
  type ConsentQuestion,
  consentQuestion,
  describeInteraction,
  type Interaction,
  type InteractionClient,
  type InteractionRequest,
  interactionParams,
  shownAuthorizationDetails,
} from "./interaction-describe";
export {
  allowInteraction,
  cancelInteraction,
  closeInteraction,
  completeInteraction,
  denyInteraction,
  finishAppInteraction,
} from "./interaction-finish";
export {
  checkLogout,
  type EndSessionParams,
  type EndSessionProblem,
  type LogoutCheck,
  readEndSession,
} from "./interaction-logout";
export {
  appTarget,
  CIBA_PAGE_PATH,
  findUserCode,
  openAppInteraction,
  openCibaApproval,
  openInvitationInteraction,
  shownUserCode,
  type UserCodeMatch,
} from "./interaction-open";
// Back-channel logout (src/runtime/consumers.ts): the event stream's consumer that finds whom to tell, the queue's that tells.
export { backchannelLogoutFanOut, deliverLogoutTokens } from "./logout";
// The AuthZEN API (src/permissions/) takes a client's own access token (`client_credentials`) with its scope.
export { MACHINE_TOKEN_GTY, verifyOAuth2AccessToken } from "./tokens";
