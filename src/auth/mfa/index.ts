/**
 * What the rest of core auth uses of the second factor: the TOTP step of a sign-in. Everything else in this folder is
 * internal to it (.dependency-cruiser.cjs).
 */
export { verifySignInMfaTotp } from "./totp-sign-in";
