import { lte } from "drizzle-orm";
import {
  linkExchangeCodes,
  mfaTickets,
  personalAccessTokens,
  refreshTokens,
  sessions,
  tickets,
} from "../db/schema";
import { eachShard } from "../db/shards";
import type { Deps } from "../http/deps";

/** The daily sweep of the core's user-keyed rows, in every shard: expired sessions and the tokens and tickets of one. */
export async function sweepAuth({ shards }: Pick<Deps, "shards">, now: number): Promise<void> {
  await eachShard(shards, (db) =>
    db.batch([
      db.delete(refreshTokens).where(lte(refreshTokens.expiresAt, now)),
      db.delete(sessions).where(lte(sessions.expiresAt, now)),
      db.delete(tickets).where(lte(tickets.expiresAt, now)),
      db.delete(personalAccessTokens).where(lte(personalAccessTokens.expiresAt, now)),
      db.delete(linkExchangeCodes).where(lte(linkExchangeCodes.expiresAt, now)),
      db.delete(mfaTickets).where(lte(mfaTickets.expiresAt, now)),
    ]),
  );
}
