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
  type ProviderTokens,
  redeemExchangeCode,
} from "./exchange-codes";
export { verifyMailedCode } from "./mailed-codes";
export { mintEmailChangeLink, mintLink, sendInvitation } from "./operator-links";
export { confirmPhoneChange, requestPhoneChange } from "./phone-change";
export { checkReauthenticationCode, sendReauthenticationCode } from "./reauthentication";
// The codes of a phone second factor's challenges (src/auth/mfa/factors.ts) live in the same objects.
export { checkOneTimeCode, issueOneTimeCode } from "./sent-codes";
export { signInPasswordlessSms, verifySignInPasswordlessSms } from "./sms-sign-in";
export { type LinkForm, type LinkTarget, type MintedLink, sendTicketMail } from "./ticket-mail";
export { consumeTicket, type TicketType } from "./tickets";
export { type VerifiedTicket, verifyTicket } from "./verify-ticket";
