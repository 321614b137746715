/**
 * Sessions as other features use them: refresh, revoke. Everything else in this folder is internal to core auth
 * (.dependency-cruiser.cjs).
 */

export { acceptsBookmark, readsOwnWriteBack } from "./own-writes";
export { refreshSession } from "./refresh";
export type { RotateOutcome } from "./refresh-session";
export { revokeAllSessions, revokeSession } from "./revocation";
export { type Session, sessionPayloadSchema, sessionSchema } from "./sessions";
export {
  familyOfCurrentToken,
  isCurrentInLegacyFamily,
  type Rotation,
  revokeFamilyOfToken,
  rotateInFamily,
  rotateInLegacyFamily,
  startFamily,
} from "./token-families";
