/**
 * RFC 9396 rich authorization requests, one module for every endpoint that takes `authorization_details` (authorize,
 * PAR, CIBA, token) and every page that shows them (consent, CIBA approval).
 */
export { LIMITS } from "./limits";
export { isNarrowerOrSame, narrowAuthorizationDetails } from "./narrow";
export {
  type AuthorizationDetail,
  authorizationDetailsError,
  checkAuthorizationDetailsShape,
  parseAuthorizationDetails,
} from "./parse";
export {
  authorizationDetailsHtml,
  describeAuthorizationDetail,
  displayValue,
  type ShownDetail,
} from "./render";
export { forgetSupportedDetailTypes, supportedDetailTypes } from "./supported-types";
export {
  type AuthorizationDetailsType,
  authorizationDetailsTypesSchema,
  type ClientWithDetailTypes,
} from "./types-config";
export {
  requestedAuthorizationDetails,
  stillAllowedDetails,
  typeConfigOf,
  validateAuthorizationDetails,
} from "./validate";
