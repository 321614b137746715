import { drizzle } from "drizzle-orm/d1";

/**
 * D1 read replication through the Sessions API (docs/decisions.md, "Reads near the user"). A query on the binding
 * itself goes to the primary, as every write and every read that must see a write does. A session may be served by
 * a replica: `first-unconstrained` by any, a bookmark by one at least as fresh as that bookmark (D1 waits for the
 * replica, or sends the query to the primary). With replication off a session reaches the primary like the binding.
 */

/** Where a client that wants to read its own writes carries the bookmark (answers set it, requests send it back). */
export const BOOKMARK_HEADER = "x-d1-bookmark";

/** D1's bookmark: three 8-digit and one 32-digit hex groups. Anything else a client sends is ignored. */
const BOOKMARK_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

export function isBookmark(value: string | null | undefined): value is string {
  return typeof value === "string" && BOOKMARK_SHAPE.test(value);
}

/**
 * Drizzle over `nearbyReads` for a read the hot-path compiled reads (compiled-read.ts) do not cover. No schema: built
 * per request, it costs well under a microsecond. Drizzle's D1 driver calls only `prepare` and `batch`, which a
 * session has like the binding.
 */
export function nearbyDrizzle(d1: D1Database, bookmark?: string | null) {
  return sessionDrizzle(nearbyReads(d1, bookmark));
}

/** Drizzle over a D1 session, as `nearbyDrizzle`: the session's `prepare` and `batch` are the binding's. */
export function sessionDrizzle(session: D1DatabaseSession) {
  return drizzle(session as unknown as D1Database);
}

/** Whatever can run a statement: the binding (the primary) or a session (maybe a replica). */
export type D1Reader = Pick<D1Database, "prepare">;

/** A session for reads a replica may serve; `bookmark`, when valid, makes it at least that fresh. */
export function nearbyReads(d1: D1Database, bookmark?: string | null): D1DatabaseSession {
  return d1.withSession(isBookmark(bookmark) ? bookmark : "first-unconstrained");
}

/**
 * The primary's bookmark now: after a write this request made on the binding, a session started from it sees that
 * write. One round trip to the primary, so only the writes a client reads back at once ask for it.
 */
export async function primaryBookmark(d1: D1Database): Promise<string | null> {
  const session = d1.withSession("first-primary");
  await session.prepare("SELECT 1").run();
  return session.getBookmark();
}
