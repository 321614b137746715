import type { Deps } from "../../http/deps";
import { liveSessionUser, type SessionUserRow } from "../hot-queries";
import { shardOfSession } from "../session-shard";

/**
 * The session, if it is still live, with its user's current row: one primary-key read in the session's shard. For a
 * face whose authenticated routes check the token's session as well as its signature (GoTrue's `session_not_found`).
 */
export async function liveSession(deps: Deps, sessionId: string): Promise<SessionUserRow | undefined> {
  if (sessionId.length > 100) return undefined;
  const db = await shardOfSession(deps.shards, sessionId);
  return db ? liveSessionUser.first(db.$client, { sessionId, now: deps.now() }) : undefined;
}
