import { and, desc, eq, gte, lt, or, sql } from "drizzle-orm";
import { type AuditEventRow, auditEvents } from "../db/schema";
import type { Deps } from "../http/deps";
import { type Page, pastCursor, toPage } from "../http/paging";
import type { WireAuditEvent } from "./wire";

function toWireEvent(row: AuditEventRow): WireAuditEvent {
  return {
    id: row.id,
    at: new Date(row.at).toISOString(),
    type: row.type,
    ...(row.userId ? { userId: row.userId } : {}),
    ...(row.ip ? { ip: row.ip } : {}),
    ...(row.userAgent ? { userAgent: row.userAgent } : {}),
    detail: row.detail,
  };
}

/**
 * `GET /admin/audit`: security events newest first, optionally of one user and of one type; the console also
 * narrows by client address and a time range (`since` inclusive, `until` exclusive, ms).
 */
export async function listAuditEvents(
  deps: Deps,
  query: {
    userId?: string;
    /** With `userId`: also the events that name the user only by address (a failed sign-in's `detail.email`). */
    userEmail?: string;
    type?: string;
    ip?: string;
    since?: number;
    until?: number;
    limit: number;
    cursor?: string;
  },
): Promise<Page<WireAuditEvent>> {
  const rows = await deps.db
    .select()
    .from(auditEvents)
    .where(
      and(
        query.userId
          ? query.userEmail
            ? or(
                eq(auditEvents.userId, query.userId),
                sql`json_extract(${auditEvents.detail}, '$.email') = ${query.userEmail}`,
              )
            : eq(auditEvents.userId, query.userId)
          : undefined,
        query.type ? eq(auditEvents.type, query.type) : undefined,
        query.ip ? eq(auditEvents.ip, query.ip) : undefined,
        query.since !== undefined ? gte(auditEvents.at, query.since) : undefined,
        query.until !== undefined ? lt(auditEvents.at, query.until) : undefined,
        pastCursor(query.cursor, auditEvents.at, auditEvents.id, "desc"),
      ),
    )
    .orderBy(desc(auditEvents.at), desc(auditEvents.id))
    .limit(query.limit + 1)
    .all();
  return toPage(rows, query.limit, (row) => [row.at, row.id], toWireEvent);
}
