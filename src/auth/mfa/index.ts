/**
 * What the rest of core auth uses of the second factor: the TOTP step of a sign-in, and setting TOTP up. Everything
 * else in this folder is internal to it (.dependency-cruiser.cjs).
 */
// An admin's unlock forgets the second factor's wrong guesses too (src/admin/unlock.ts).

// The same list read in one batch with a face's other reads of the user.
export {
  type FactorFactsRow,
  factorFacts,
  factorFactsOfUser,
  factorsFromFacts,
} from "./factor-reads";
// The factors as a list, for the Supabase face's `mfa` namespace and its admin (contract supabase.md §2).
export {
  challengeFactor,
  enrollPhone,
  enrollTotp,
  type Factor,
  FactorError,
  factorOf,
  factorsOf,
  removeFactor,
  verifyFactor,
} from "./factors";
// The choice of second step beyond TOTP (issue 47): the API's `POST /user/mfa` and the account center's form.
export { chooseSecondStep, dropSecondStepChoice, type MfaChoice } from "./mfa-choice";
export { forgetSecondFactorGuesses } from "./second-factor";
export { stepUpSession } from "./step-up";
// Setting TOTP up: the account center's two-step section (src/account-center/security/) uses the API's own steps.
export {
  changeMfa,
  createRecoveryCodes,
  generateTotp,
  issueRecoveryCodes,
  startTotpSetup,
} from "./totp-setup";
export { mfaTicketUser, verifySignInMfaCode, verifySignInMfaTotp } from "./totp-sign-in";
export {
  challengeWebauthnFactor,
  enrollWebauthn,
  verifyWebauthnFactor,
  type WebauthnAnswer,
  type WebauthnChallenge,
} from "./webauthn-factors";
