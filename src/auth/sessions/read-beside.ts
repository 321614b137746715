import { and, type Column, eq, gt, sql } from "drizzle-orm";
import { QueryBuilder } from "drizzle-orm/sqlite-core";
import { type CompiledRead, compileRead } from "../../db/compiled-read";
import { nearbyReads } from "../../db/replica";
import { sessions, users } from "../../db/schema";
import type { Shards } from "../../db/shards";
import type { Deps } from "../../http/deps";
import { SESSION_USER_COLUMNS, type SessionUserRow } from "../hot-queries";

/**
 * A refresh in one wave (issue 48, "Round trips"; docs/performance.md): the session and its user are read BESIDE the
 * rotation, not after it. The refresh token names its family's object (its locator, six hex digits) but not its
 * session, and the session's id comes back only with the rotation's answer; so the read asks for every live session
 * whose tokens carry the same locator (`sessions.locator`, indexed), and the rotation's answer picks the one row whose
 * id is its family. A locator is shared by few sessions (2^24 objects; at 300 M live sessions, ~18), all read and
 * all dropped but one, on the server: nothing of another session reaches the client.
 *
 * Which database: a session minted since this change has a locator whose first three hex digits are its user's slot
 * (`sessionLocator`), so the shard is known from the token alone. A locator from before is random there: with one
 * shard that does not matter; with several the read may go to a shard that has no such row, and the refresh then
 * reads by the family's id after the rotation, as before (two waves, until those sessions' tokens expire).
 */

/** The rows a beside read found, and how fresh the database was that answered (D1's bookmark; null: unknown). */
export interface BesideRows<Row> {
  rows: (Row & { familyId: string })[];
  bookmark: string | null;
}

/** A read of the live sessions of one locator, with their users: the Nhost face's columns, or a face's own. */
export type ByLocatorRead<Row> = CompiledRead<{ locator: string; now: number }, Row & { familyId: string }>;

/** `columns` (decoded by `decoders`) of every live session of a locator, each with its id as `familyId`. */
export function byLocatorRead<Row>(
  columns: Record<string, unknown>,
  decoders: Record<string, Pick<Column, "mapFromDriverValue">>,
): ByLocatorRead<Row> {
  return compileRead(
    new QueryBuilder()
      .select({ ...(columns as typeof SESSION_USER_COLUMNS), familyId: sessions.id })
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .where(
        and(eq(sessions.locator, sql.placeholder("locator")), gt(sessions.expiresAt, sql.placeholder("now"))),
      ),
    { ...decoders, familyId: sessions.id } as never,
  );
}

/** The Nhost face's beside read: `liveSessionUser`'s columns. */
export const liveSessionsOfLocator = byLocatorRead<SessionUserRow>(
  SESSION_USER_COLUMNS,
  SESSION_USER_COLUMNS,
);

/** The slot a session locator minted by `sessionLocator` starts with. */
export const slotOfLocator = (locator: string) => Number.parseInt(locator.slice(0, 3), 16);

/** The database a locator's sessions are in (see the module's comment for locators from before). */
function shardOfLocator(shards: Shards, locator: string): D1Database {
  return shards.count === 1 ? shards.homeD1 : shards.d1OfSlot(slotOfLocator(locator));
}

/** Whether a locator's sessions are in the home database (one shard; or the slot the locator names is home's). */
export const locatorOnHome = (shards: Shards, locator: string): boolean =>
  shardOfLocator(shards, locator) === shards.homeD1;

/**
 * Starts the read beside the rotation. `read`: the face's read, run on the primary (the face reads its own writes
 * back, see renew.ts); none: the Nhost face's, on a nearby replica, whose bookmark `pickBeside` checks against the
 * family's. A failed read is no answer (undefined): the refresh then reads after the rotation as before, and a D1
 * fault shows there.
 */
export function readBeside(
  deps: Deps,
  locator: string,
  now: number,
  read?: ByLocatorRead<SessionUserRow>,
): Promise<BesideRows<SessionUserRow> | undefined> {
  const d1 = shardOfLocator(deps.shards, locator);
  const run = async (): Promise<BesideRows<SessionUserRow>> => {
    if (read) return { rows: await read.all(d1, { locator, now }), bookmark: null };
    const session = nearbyReads(d1);
    const rows = await liveSessionsOfLocator.all(session, { locator, now });
    return { rows, bookmark: session.getBookmark() };
  };
  return run().catch(() => undefined);
}

/**
 * The family's row among what the beside read found, or undefined when it must be read again after the rotation:
 * not found (a session written a moment ago that the replica has not got, a locator from before on another shard),
 * or read from a replica older than the family's bookmark (its user's own write that the next refresh must see).
 * `primary`: the read went to the primary, which is as fresh as any bookmark.
 */
export function pickBeside<Row>(
  beside: BesideRows<Row> | undefined,
  family: string,
  familyBookmark: string | null | undefined,
  primary: boolean,
): Row | undefined {
  const row = beside?.rows.find((candidate) => candidate.familyId === family);
  if (!row) return undefined;
  // Bookmarks are fixed-width hex: their text order is their order.
  const fresh = primary || !familyBookmark || (beside?.bookmark != null && beside.bookmark >= familyBookmark);
  return fresh ? row : undefined;
}
