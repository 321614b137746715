/**
 * OpenID CIBA Core 1.0, poll and ping (contract operators.md §2): the backchannel authentication endpoint, the user's
 * approval (a page request through the built-in pages, like a device's), the account center's list, the ping. The
 * requests are device authorizations of `kind = ciba` (device.ts): the same poll, decision and single use.
 */
export {
  approvalLink,
  CIBA_DONE_PATH,
  CIBA_PAGE_PATH,
  openCibaApproval,
  type WaitingApproval,
  waitingApprovals,
} from "./approvals";
export { deliverPings, isPingMessage, pingClient } from "./ping";
export { backchannelRoutes } from "./routes";
