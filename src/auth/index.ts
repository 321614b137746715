/**
 * Core auth as the rest of the service uses it (providers, the OAuth2 server and its page, the admin API): the users,
 * the one place a user is created, sessions, completing a sign-in, and the flows other features offer on their own
 * pages. Everything else in src/auth/ is internal to it (.dependency-cruiser.cjs): the files at this folder's root
 * are the core its sub-folders share, and each sub-folder's index.ts is what the others may use of it.
 */
export {
  changeUserPassword,
  checkPasswordPolicy,
  createPersonalAccessToken,
  listPersonalAccessTokens,
  type PersonalAccessTokenFacts,
  resetPasswordInSession,
  revokePersonalAccessToken,
  signInAnonymous,
  signInEmailPassword,
  signInPhonePassword,
  signUpEmailPassword,
  signUpPhonePassword,
  userOfPersonalAccessToken,
} from "./accounts";
export { credentialsChanged } from "./credential-changes";
export { proveEmail } from "./credential-reset";
export { type DeviceName, deviceNameOf, type KnownBy, knownDeviceOf, mailTime } from "./devices";
export {
  changeUserEmail,
  checkReauthenticationCode,
  confirmPhoneChange,
  type ExchangeRefusal,
  issueExchangeCode,
  type LinkForm,
  type LinkRequest,
  type MintedLink,
  mintEmailChangeLink,
  mintLink,
  type ProviderTokens,
  redeemExchangeCode,
  requestPhoneChange,
  sendInvitation,
  sendPasswordResetEmail,
  sendReauthenticationCode,
  sendVerificationEmail,
  signInPasswordlessEmail,
  signInPasswordlessSms,
  type TicketType,
  type VerifiedTicket,
  verifyMailedCode,
  verifySignInPasswordlessSms,
  verifyTicket,
} from "./links";
// The per-account lockout (contract §13): its object (src/index.ts exports the class), an admin's unlock.
export { type FactorLock, lockedFactors, SignInLockout, unlockAccount } from "./lockout";
// The Supabase face's `webauthn` factors.
export {
  challengeFactor,
  challengeWebauthnFactor,
  changeMfa,
  chooseSecondStep,
  createRecoveryCodes,
  dropSecondStepChoice,
  enrollPhone,
  enrollTotp,
  enrollWebauthn,
  type Factor,
  FactorError,
  type FactorFactsRow,
  factorFacts,
  factorFactsOfUser,
  factorOf,
  factorsFromFacts,
  factorsOf,
  forgetSecondFactorGuesses,
  generateTotp,
  issueRecoveryCodes,
  mfaTicketUser,
  removeFactor,
  startTotpSetup,
  stepUpSession,
  verifyFactor,
  verifySignInMfaCode,
  verifySignInMfaTotp,
  verifyWebauthnFactor,
  type WebauthnAnswer,
} from "./mfa";
export {
  type AccessTokenFacts,
  type AccessTokenMinter,
  IMPORTED_NHOST_METHOD,
  IMPORTED_SUPABASE_METHOD,
  type ReadsAlongside,
  refreshLifetimeMs,
  SESSION_LOCATOR_CLAIM,
  type Session,
  sessionPayloadSchema,
  sessionSchema,
} from "./new-sessions";
export { createUser, identifiersOf, removeUser } from "./new-users";
export {
  type ActiveMembership,
  activeMembership,
  BUILT_IN_ORG_ROLES,
  orgRoles,
} from "./org-membership";
export { mergeOwnMetadata, updateOwnProfile } from "./profile";
export { parseRecentPlaces, type RecentPlace } from "./recent-places";
export { revokeAllSessions, revokeByRefreshToken, revokeSession } from "./revocation";
// The second step of a sign-in (issue 47): which one a user owes, and its ticket issued with its code sent, for a
// feature that asks a step of its own (an email code for a user without a factor).
export { issueSecondStep, type SecondStep, secondStepOf } from "./second-step";
export {
  type Alongside,
  listUserSessions,
  liveSession,
  liveSessionBy,
  liveSessionRead,
  liveSessionWith,
  renewSession,
  revokeOtherUserSessions,
  revokeUserSession,
  type UserSession,
  userSessionSchema,
} from "./sessions";
export { impersonationOf } from "./sessions/renew";
// Every sign-in: its method (never read from a URL), its scope, the two steps, the checks other features add.
export {
  beginSignIn,
  countEarly,
  earlyReader,
  type GateDecision,
  type KeptPasswordCheck,
  type KeptPasswordVerdict,
  type Method,
  providerMethod,
  readBeforeFirstFactor,
  readEarly,
  registerSignInHooks,
  type SessionGate,
  type SessionGateReads,
  type SignInCheck,
  type SignInHooks,
  type SignInResult,
  type SignInScope,
  settleFirstFactor,
  signInScope,
  startImpersonatedSession,
  startSession,
} from "./sign-in";
export type { SignUpCheck } from "./sign-up-checks";
export {
  conformingDisplayName,
  resolveRedirectTo,
  resolveSignUpOptions,
  type SignUpOptions,
  signUpOptionsSchema,
} from "./sign-up-options";
export { methodRefusedUnderSso } from "./sso-enforcement";
export { endSessionsUnderSso } from "./sso-sweep";
export {
  accountOfEmail,
  findUserByEmail,
  findUserById,
  hasuraClaims,
  toWireUser,
  type WireUser,
  wireUserSchema,
} from "./users";
export {
  addSecurityKey,
  authenticationCredential,
  type BackupState,
  backupStateOf,
  CeremonyError,
  type CeremonyStage,
  type CredentialSignals,
  credentialSignals,
  deleteSecurityKey,
  elevationSatisfied,
  listSecurityKeys,
  listSecurityKeysWithBackup,
  registrationCredential,
  renameSecurityKey,
  requireElevation,
  type SecurityKeyWithBackup,
  signInWebauthn,
  UNKNOWN_CREDENTIAL_MESSAGE,
  UPGRADE_WINDOW_MS,
  type UpgradeClaim,
  userHasSecurityKey,
  verifyAddSecurityKey,
  verifySignInWebauthn,
  type WireSecurityKey,
} from "./webauthn";
