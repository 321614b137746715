/**
 * What the rest of the service may use of the OAuth2 authorization server (the admin API mounts its client routes,
 * the console manages clients, the queue handler runs back-channel logout). Everything else in src/oauth2/ is
 * internal to it (.dependency-cruiser.cjs).
 */

// The interaction contract (interaction.ts): the built-in pages (src/pages/) finish or refuse a pending request through
// it, as an external login UI does, and read what they show of the request: its client, the person's consents and
// organizations, a device's user code, an app's hosted sign-in, an RP-initiated logout's parameters.
export { appRequest, appTarget, finishAppSignIn, isAccountCenter } from "./app-requests";
export {
  type ClientBody,
  type ClientConsent,
  type ClientGrant,
  clientBodySchema,
  clientUsage,
  createClient,
  deleteClient,
  findOAuth2Client,
  getClient,
  isLoopbackRedirect,
  listClients,
  oauth2ClientAdminRoutes,
  replaceClient,
  rotateClientSecret,
  SUPPORTED_SCOPES,
  type WireClient,
} from "./clients";
export { grantedScopes, rememberConsent } from "./consents";
export { deviceRequest, normalizeUserCode, pendingByUserCode } from "./device";
export { OAuth2Error } from "./errors";
export { completeInteraction, denyInteraction } from "./interaction";
// Back-channel logout (src/runtime/consumers.ts): the event stream's consumer that finds whom to tell, the queue's that tells.
export {
  backchannelLogoutFanOut,
  checkEndSession,
  deliverLogoutTokens,
  type EndSessionParams,
  type EndSessionProblem,
  endSessionParams,
} from "./logout";
export { memberOrganizations, namedOrganization } from "./organizations";
export { oauth2Params } from "./params";
export {
  forgetPendingRequest,
  loadPendingRequest,
  newRequestId,
  type PendingRequest,
  savePendingRequest,
} from "./pending-requests";
export { authorizationResponse } from "./redirects";
