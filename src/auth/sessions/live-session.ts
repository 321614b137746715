import { and, eq, gt, type SQL, sql } from "drizzle-orm";
import { QueryBuilder } from "drizzle-orm/sqlite-core";
import { type CompiledRead, compileRead } from "../../db/compiled-read";
import { sessions, users } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { liveSessionUser, SESSION_USER_COLUMNS, type SessionUserRow } from "../hot-queries";
import { shardOfSession } from "../session-shard";
import { type ByLocatorRead, byLocatorRead } from "./read-beside";

/**
 * The session, if it is still live, with its user's current row: one primary-key read in the session's shard. For a
 * face whose authenticated routes check the token's session as well as its signature (GoTrue's `session_not_found`).
 */
export async function liveSession(deps: Deps, sessionId: string): Promise<SessionUserRow | undefined> {
  if (sessionId.length > 100) return undefined;
  const db = await shardOfSession(deps.shards, sessionId);
  return db ? liveSessionUser.first(db.$client, { sessionId, now: deps.now() }) : undefined;
}

/**
 * The same columns, each named apart (`live_<name>`): D1 answers a batch's rows by column name, and the session's and
 * the user's columns share names (`id`, `created_at`), so the unaliased read would lose some in a batch.
 */
const ALIASED_COLUMNS = Object.fromEntries(
  Object.entries(SESSION_USER_COLUMNS).map(([name, column]) => [
    name,
    sql`${column}`.mapWith(column).as(`live_${name}`),
  ]),
) as Record<keyof SessionUserRow, SQL.Aliased<unknown>>;

/** `liveSession`'s read with its columns named apart, its SQL built once: for a `D1Database.batch`. */
export const liveSessionBatched = compileRead<{ sessionId: string; now: number }, SessionUserRow>(
  new QueryBuilder()
    .select(ALIASED_COLUMNS)
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(
      and(eq(sessions.id, sql.placeholder("sessionId")), gt(sessions.expiresAt, sql.placeholder("now"))),
    ),
  SESSION_USER_COLUMNS,
);

/**
 * `liveSession` and a face's other reads of the token's user, as one D1 batch in the session's shard (the user's):
 * one round trip where it would be two. The other statements' results come back in their order, unchecked: the
 * caller uses them only once the session is found live and its user is the token's.
 */
export async function liveSessionWith(
  deps: Deps,
  sessionId: string,
  reads: (d1: D1Database) => D1PreparedStatement[],
): Promise<{ live: SessionUserRow | undefined; results: D1Result[] }> {
  if (sessionId.length > 100) return { live: undefined, results: [] };
  const db = await shardOfSession(deps.shards, sessionId);
  if (!db) return { live: undefined, results: [] };
  const d1 = db.$client;
  const [session, ...results] = await d1.batch([
    liveSessionBatched.statement(d1, { sessionId, now: deps.now() }),
    ...reads(d1),
  ]);
  return { live: liveSessionBatched.rowsOf(session!)[0], results };
}

/**
 * What a face's own read of the live session takes (`liveSessionRead`); `byLocator`: the same columns for every live
 * session of a refresh token's locator, read beside the rotation (read-beside.ts).
 */
export type LiveSessionRead<Row> = CompiledRead<{ sessionId: string; now: number }, Row> & {
  byLocator?: ByLocatorRead<Row>;
};

/**
 * `liveSession`'s read with a face's `extra` columns (SQL over the user's row, each named apart), its SQL built once:
 * what a face's authenticated route needs beside the session check, in the same statement (one lookup).
 */
export function liveSessionRead<Extra extends Record<string, SQL.Aliased<unknown>>>(
  extra: Extra,
): LiveSessionRead<SessionUserRow & { [K in keyof Extra]: unknown }> {
  const columns = { ...SESSION_USER_COLUMNS, ...extra };
  // The extra columns come back as SQLite gives them (the face decodes them); the others as their columns decode.
  const asRead = { mapFromDriverValue: (value: unknown) => value };
  const decoders = {
    ...SESSION_USER_COLUMNS,
    ...Object.fromEntries(Object.keys(extra).map((name) => [name, asRead])),
  };
  const byId = compileRead<
    { sessionId: string; now: number },
    SessionUserRow & { [K in keyof Extra]: unknown }
  >(
    new QueryBuilder()
      .select(columns)
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .where(
        and(eq(sessions.id, sql.placeholder("sessionId")), gt(sessions.expiresAt, sql.placeholder("now"))),
      ),
    decoders as never,
  );
  return { ...byId, byLocator: byLocatorRead(columns, decoders as never) };
}

/** The session by a face's own read (`liveSessionRead`), if it is still live. */
export async function liveSessionBy<Row>(
  deps: Deps,
  sessionId: string,
  read: LiveSessionRead<Row>,
): Promise<Row | undefined> {
  if (sessionId.length > 100) return undefined;
  const db = await shardOfSession(deps.shards, sessionId);
  return db ? read.first(db.$client, { sessionId, now: deps.now() }) : undefined;
}
