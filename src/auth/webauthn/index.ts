/**
 * What the rest of core auth uses of WebAuthn: elevation for sensitive operations, and a user's own keys. Everything
 * else in this folder is internal to it (.dependency-cruiser.cjs).
 */
export { requireElevation } from "./elevation";
// The account center's passkeys section (src/account-center/security/) adds, lists and removes keys with the API's
// own steps.
export { addSecurityKey, verifyAddSecurityKey } from "./registration";
export {
  deleteSecurityKey,
  listSecurityKeys,
  userHasSecurityKey,
  type WireSecurityKey,
} from "./security-keys";
export { registrationCredential } from "./webauthn-routes";
