/**
 * What core auth's other sub-folders use of sessions: renewal, and the own-write bookmark for routes that change the
 * caller's row. Making and ending sessions is the core's (../new-sessions.ts, ../revocation.ts); refresh-token
 * rotation is plumbing (src/token-families/). Everything else in this folder is internal to it.
 */
export { acceptsBookmark, readsOwnWriteBack } from "./own-writes";
export { renewSession } from "./renew";
