/**
 * The second factor as other features use it: a sign-in that may need TOTP. Everything else in this folder is
 * internal to core auth (.dependency-cruiser.cjs).
 */
export { completeSignIn, type SignInResult, verifySignInMfaTotp } from "./mfa-sign-in";
