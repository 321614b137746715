import { lte } from "drizzle-orm";
import {
  linkExchangeCodes,
  mfaTickets,
  personalAccessTokens,
  refreshTokens,
  sessions,
  tickets,
  users,
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

/**
 * Every minute: timed bans (GoTrue's `ban_duration`, src/admin/users.ts `patchUser`) whose time is up end, in every
 * shard, by the partial index of banned users. A ban ends within the minute after its time; until then the user is
 * still refused as banned.
 */
export async function liftEndedBans({ shards }: Pick<Deps, "shards">, now: number): Promise<void> {
  await eachShard(shards, (db) =>
    db
      .update(users)
      .set({ disabled: false, bannedUntil: null, updatedAt: now })
      .where(lte(users.bannedUntil, now))
      .run(),
  );
}
