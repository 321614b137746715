/**
 * What the rest of core auth uses of WebAuthn: elevation for sensitive operations, and a user's own keys. Everything
 * else in this folder is internal to it (.dependency-cruiser.cjs).
 */

// The Supabase face's passkeys (src/faces/supabase/gotrue/passkey-routes.ts): the same ceremonies as the API's
// `/signin/webauthn` and `/user/webauthn/add`, and what failed, which GoTrue's errors name.
export { signInWebauthn, verifySignInWebauthn } from "./authentication";
// The backup state (synced or device-bound) the console and the account center show.
export { type BackupState, backupStateOf } from "./backup-state";
export { CeremonyError, type CeremonyStage, UNKNOWN_CREDENTIAL_MESSAGE } from "./ceremonies";
export { elevationSatisfied, requireElevation } from "./elevation";
// The Supabase face's `webauthn` factors (src/auth/mfa/webauthn-factors.ts): keys that are second factors only.
export {
  answeredChallenge,
  type FactorKey,
  factorCreationOptions,
  factorRequestOptions,
  verifyFactorAssertion,
  verifyFactorCreation,
} from "./factor-keys";
// The account center's passkeys section (src/account-center/security/) adds, lists and removes keys with the API's
// own steps.
export { addSecurityKey, verifyAddSecurityKey } from "./registration";
// The passkey second step of a sign-in (src/auth/mfa/webauthn-sign-in.ts).
export { type SecondStepKey, secondStepOptions, verifySecondStepKey } from "./second-step-keys";
export {
  deleteSecurityKey,
  listSecurityKeys,
  listSecurityKeysWithBackup,
  renameSecurityKey,
  type SecurityKeyWithBackup,
  userHasSecurityKey,
  type WireSecurityKey,
} from "./security-keys";
// The pages' passkey upgrade and Signal API (src/pages/passkey-upgrade.ts, docs/passkeys.md).
export { type CredentialSignals, credentialSignals } from "./signals";
export { UPGRADE_WINDOW_MS, type UpgradeClaim } from "./upgrade";
export { authenticationCredential, registrationCredential } from "./webauthn-routes";
