/**
 * Accounts as other features use them (providers, the OAuth2 page, the admin API): users, sign-up options, proof of an
 * address. Everything else in this folder is internal to core auth (.dependency-cruiser.cjs).
 */
export { proveEmail } from "./credential-reset";
export { resetPasswordInSession } from "./password-change";
export { checkPasswordPolicy } from "./password-policy";
export { signInEmailPassword } from "./sign-in";
export { signUpEmailPassword } from "./sign-up";
export {
  conformingDisplayName,
  resolveRedirectTo,
  resolveSignUpOptions,
  type SignUpOptions,
  signUpOptionsSchema,
} from "./sign-up-options";
export { insertUser } from "./user-factory";
export {
  findUserByEmail,
  findUserById,
  hasuraClaims,
  toWireUser,
  type WireUser,
  wireUserSchema,
} from "./users";
