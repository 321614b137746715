import type { AuditEventRow } from "../db/schema";
import type { ActorKind } from "./actor";
import type { Outcome } from "./outcome";

/** One row of `audit_events`, as the recorder writes it. */
export type AuditRow = AuditEventRow;

/**
 * An audit event as it leaves the service: the admin API's item (`GET /admin/audit`), the body of its
 * `audit.recorded` event in the queue, what the OTLP export and the CLI's OCSF export read. Absent parts are omitted.
 */
export interface AuditRecord {
  id: string;
  /** ISO 8601. */
  at: string;
  type: string;
  /** The subject: the user the event concerns. */
  userId?: string;
  actor: { type: ActorKind; name?: string };
  outcome: Outcome;
  reason: string;
  ip?: string;
  userAgent?: string;
  detail: Record<string, unknown>;
}

export function auditRecordOf(row: AuditRow): AuditRecord {
  return {
    id: row.id,
    at: new Date(row.at).toISOString(),
    type: row.type,
    ...(row.userId ? { userId: row.userId } : {}),
    actor: { type: row.actor as ActorKind, ...(row.actorName ? { name: row.actorName } : {}) },
    outcome: row.outcome as Outcome,
    reason: row.reason ?? row.type,
    ...(row.ip ? { ip: row.ip } : {}),
    ...(row.userAgent ? { userAgent: row.userAgent } : {}),
    detail: row.detail,
  };
}

/** The data of an `audit.recorded` event in the queue: the record, whole. */
export const auditStreamData = (row: AuditRow): Record<string, unknown> => ({ audit: auditRecordOf(row) });

/** The record an `audit.recorded` event carries, or null for a body that is not one (an older or foreign message). */
export function auditRecordFromStream(data: Record<string, unknown>): AuditRecord | null {
  const audit = data.audit as Partial<AuditRecord> | undefined;
  if (
    !audit ||
    typeof audit.id !== "string" ||
    typeof audit.at !== "string" ||
    typeof audit.type !== "string"
  )
    return null;
  return audit as AuditRecord;
}
