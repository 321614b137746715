/**
 * What core auth's other sub-folders (and, through ../index.ts, the account center) use of sessions: renewal, the
 * own-write bookmark for routes that change the caller's row, and the user's session list (contract §13). Making
 * and ending sessions is the core's (../new-sessions.ts, ../revocation.ts); refresh-token rotation is plumbing
 * (src/token-families/). Everything else in this folder is internal to it.
 */
export {
  type LiveSessionRead,
  liveSession,
  liveSessionBy,
  liveSessionRead,
  liveSessionWith,
} from "./live-session";
export { acceptsBookmark, readsOwnWriteBack } from "./own-writes";
export { type Alongside, renewSession } from "./renew";
export {
  listUserSessions,
  revokeOtherUserSessions,
  revokeUserSession,
  type UserSession,
  userSessionSchema,
} from "./user-sessions";
