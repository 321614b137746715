/**
 * Logout (contract §12): RP-Initiated Logout 1.0 (the checks of an end-session request; the page that asks and the
 * route are in src/pages/logout-*.ts) and Back-Channel Logout 1.0 (the event stream's consumer that finds whom to tell
 * when a session ends, and the queue consumer that tells them).
 */

export type { IdTokenHint } from "../id-token-hint";
export { deliverLogoutTokens, type LogoutDeliveryDeps } from "./backchannel-delivery";
export { backchannelLogoutFanOut, type LogoutDeliveryMessage } from "./backchannel-fan-out";
export {
  checkEndSession,
  type EndSession,
  type EndSessionParams,
  type EndSessionProblem,
  endSessionParams,
} from "./end-session";
export { BACKCHANNEL_LOGOUT_EVENT, LOGOUT_TOKEN_TYPE } from "./logout-token";
