/**
 * Sessions as other features use them: refresh, revoke. Everything else in this folder is internal to core auth
 * (.dependency-cruiser.cjs).
 */
export type { RotateOutcome } from "./refresh-session";
export { refreshSession, revokeAllSessions, revokeSession } from "./sessions";
