/**
 * The service's own pages for the authorization server, as the endpoint routes mount and use them: the login and
 * consent page (`/oauth2/interaction`, unless an external login UI is set), the device page (`/oauth2/device`), the
 * invitation page (`/oauth2/invitation`, with the login page), and RP-initiated logout (`/oauth2/logout`, with the
 * login page: the session it ends is the page's).
 */
export { devicePageRoutes } from "./device-routes";
// The hosted pages of a first-party app (`/signin`, `/signup`, `/reset`, contract §13): the login page's views.
export { hostedPageRoutes } from "./hosted-routes";
export { interactionRoutes } from "./interaction-routes";
export { invitationPageRoutes } from "./invitation-routes";
export { LOGOUT_PATH, logoutRoutes } from "./logout-routes";
