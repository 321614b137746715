import { and, desc, eq, lt, or } from "drizzle-orm";
import { type AuditEventRow, auditEvents } from "../db/schema";
import type { Deps } from "../services/deps";
import { decodeCursor, type Page, toPage } from "./paging";

export interface WireAuditEvent {
  id: string;
  at: string;
  type: string;
  userId?: string;
  ip?: string;
  userAgent?: string;
  detail: Record<string, unknown>;
}

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

/** `GET /admin/audit`: security events newest first, optionally of one user and of one type. */
export async function listAuditEvents(
  deps: Deps,
  query: { userId?: string; type?: string; limit: number; cursor?: string },
): Promise<Page<WireAuditEvent>> {
  const after = query.cursor ? decodeCursor(query.cursor) : null;
  const rows = await deps.db
    .select()
    .from(auditEvents)
    .where(
      and(
        query.userId ? eq(auditEvents.userId, query.userId) : undefined,
        query.type ? eq(auditEvents.type, query.type) : undefined,
        after
          ? or(lt(auditEvents.at, after[0]), and(eq(auditEvents.at, after[0]), lt(auditEvents.id, after[1])))
          : undefined,
      ),
    )
    .orderBy(desc(auditEvents.at), desc(auditEvents.id))
    .limit(query.limit + 1)
    .all();
  return toPage(rows, query.limit, (row) => [row.at, row.id], toWireEvent);
}
