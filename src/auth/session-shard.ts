import type { Db } from "../db/client";
import { shardOfMinted } from "../db/directory";
import type { Shards } from "../db/shards";

/**
 * The shard of a session's row, and so of its user's: the slot its id carries (minted by `writeSession`), or, for a
 * session imported from Nhost under Nhost's id, the directory. Undefined: the session exists nowhere. A refresh and a
 * sign-out know only the session (the token's family), never the user, so this is how they reach the user's shard.
 */
export function shardOfSession(shards: Shards, sessionId: string): Promise<Db | undefined> {
  return shardOfMinted(shards, sessionId, { kind: "session", value: sessionId });
}
