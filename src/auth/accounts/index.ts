/**
 * What core auth's other sub-folders use of accounts (the rest of the service goes through src/auth/index.ts).
 * Everything else in this folder is internal to it (.dependency-cruiser.cjs).
 */

export { signInAnonymous } from "./anonymous";
export { changeUserPassword, resetPasswordInSession } from "./password-change";
export { checkPasswordPolicy } from "./password-policy";
export {
  createPersonalAccessToken,
  listPersonalAccessTokens,
  type PersonalAccessTokenFacts,
  revokePersonalAccessToken,
  userOfPersonalAccessToken,
} from "./pat";
export { signInPhonePassword, signUpPhonePassword } from "./phone-password";
export { signInEmailPassword } from "./sign-in";
export { completeSignUp, signUpEmailPassword } from "./sign-up";
