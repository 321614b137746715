import { and, desc, eq, gte, lt, or, sql } from "drizzle-orm";
import type { ActorKind } from "../audit/actor";
import { auditRecordOf } from "../audit/stream";
import { type AuditEventRow, auditEvents } from "../db/schema";
import type { Deps } from "../http/deps";
import { type Page, pastCursor, toPage } from "../http/paging";
import { compareText, mergeAcross } from "./across-shards";
import type { WireAuditEvent } from "./wire";

const toWireEvent = (row: AuditEventRow): WireAuditEvent => auditRecordOf(row);

/**
 * `GET /admin/audit`: security events newest first, optionally of one user and of one type; the console also
 * narrows by client address and a time range (`since` inclusive, `until` exclusive, ms). A user's events are in
 * their shard, failed sign-ins and events of no user in the home database (src/audit/record.ts): a list of one user
 * reads those two, one of failed sign-ins the home database, any other list every shard, merged newest first.
 */
export async function listAuditEvents(
  deps: Deps,
  query: {
    userId?: string;
    /** With `userId`: also the events that name the user only by address (a failed sign-in's `detail.email`). */
    userEmail?: string;
    type?: string;
    actor?: ActorKind;
    ip?: string;
    since?: number;
    until?: number;
    limit: number;
    cursor?: string;
  },
): Promise<Page<WireAuditEvent>> {
  const conditions = and(
    query.userId
      ? query.userEmail
        ? or(
            eq(auditEvents.userId, query.userId),
            sql`json_extract(${auditEvents.detail}, '$.email') = ${query.userEmail}`,
          )
        : eq(auditEvents.userId, query.userId)
      : undefined,
    query.type ? eq(auditEvents.type, query.type) : undefined,
    query.actor ? eq(auditEvents.actor, query.actor) : undefined,
    query.ip ? eq(auditEvents.ip, query.ip) : undefined,
    query.since !== undefined ? gte(auditEvents.at, query.since) : undefined,
    query.until !== undefined ? lt(auditEvents.at, query.until) : undefined,
  );
  const start = pastCursor(query.cursor, auditEvents.at, auditEvents.id, "desc");
  const { shards } = deps;
  const userShard = query.userId === undefined ? undefined : shards.indexOfUser(query.userId);
  const rows = await mergeAcross<AuditEventRow>(shards, {
    read: (db, after, limit) =>
      db
        .select()
        .from(auditEvents)
        .where(
          and(
            conditions,
            after
              ? or(
                  lt(auditEvents.at, after.at),
                  and(eq(auditEvents.at, after.at), lt(auditEvents.id, after.id)),
                )
              : start,
          ),
        )
        .orderBy(desc(auditEvents.at), desc(auditEvents.id))
        .limit(limit)
        .all(),
    compare: (a, b) => b.at - a.at || compareText(b.id, a.id),
    take: query.limit + 1,
    only: (index) =>
      index === 0 || (query.type !== "signin.failure" && (userShard === undefined || index === userShard)),
  });
  return toPage(rows, query.limit, (row) => [row.at, row.id], toWireEvent);
}
