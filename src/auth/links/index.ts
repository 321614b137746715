/**
 * What core auth's other sub-folders use of mailed links (the rest of the service goes through src/auth/index.ts).
 * Everything else in this folder is internal to it (.dependency-cruiser.cjs).
 */
export {
  changeUserEmail,
  type LinkRequest,
  sendPasswordResetEmail,
  sendVerificationEmail,
  signInPasswordlessEmail,
} from "./email-flows";
export {
  type ExchangeRefusal,
  issueExchangeCode,
  orgOfCode,
  redeemExchangeCode,
  takeExchangeCode,
} from "./exchange-codes";
// The codes of a phone second factor's challenges (src/auth/mfa/factors.ts) live in the same objects.
export { checkOneTimeCode, issueOneTimeCode } from "./sent-codes";
export { type LinkTarget, sendTicketMail } from "./ticket-mail";
export { consumeTicket } from "./tickets";
