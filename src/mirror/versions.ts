import type { Sql } from "./postgres";

/** Which change of its subject's stream a mirrored row reflects: an event, or a resync's read of D1. */
export interface Version {
  rowId: string;
  /** The event stream's subject: the user's id, or `file:<id>` for a file no user uploaded. */
  subject: string;
  /** The subject's sequence number of that change (`event_sequences.last` for a resync). */
  sequence: number;
  /** Whether that change removed the row: a tombstone, so that no earlier change brings it back. */
  deleted: boolean;
  /** When the change was written (ISO): orders changes of different subjects (a file whose uploader changed). */
  at: string;
}

export type RowKind = "user" | "file";

/**
 * Claims rows for writing: records each version unless the row already reflects a newer change, and returns the
 * ids it recorded. Call it inside the transaction that then writes exactly those rows: the upsert locks each version
 * row until the transaction ends, so a concurrent consumer's claim of the same row waits and then sees this one's
 * outcome (queues do not keep order, and several consumers run at once). An equal sequence is claimed again: it is
 * the same change delivered twice, or a resync's read of the state that change left, and writing it twice is
 * harmless; what is never claimed is an older change, so a late delivery neither resurrects a deleted row nor
 * overwrites newer data.
 */
export async function claimVersions(sql: Sql, kind: RowKind, versions: Version[]): Promise<Set<string>> {
  if (versions.length === 0) return new Set();
  // One version per row (an upsert may not touch a row twice), the newest; in a fixed order, so two transactions
  // claiming overlapping rows lock them in the same order and cannot deadlock.
  const newest = new Map<string, Version>();
  for (const version of versions) {
    const seen = newest.get(version.rowId);
    if (!seen || seen.sequence < version.sequence) newest.set(version.rowId, version);
  }
  const rows = [...newest.values()]
    .sort((a, b) => (a.rowId < b.rowId ? -1 : a.rowId > b.rowId ? 1 : 0))
    .map((v) => ({
      row_id: v.rowId,
      subject: v.subject,
      sequence: v.sequence,
      deleted: v.deleted,
      event_at: v.at,
    }));
  const { rows: claimed } = await sql.query<{ row_id: string }>(
    `INSERT INTO edge_auth_mirror.versions AS v (row_kind, row_id, subject, sequence, deleted, event_at)
     SELECT $1, c.row_id, c.subject, c.sequence, c.deleted, c.event_at
       FROM jsonb_to_recordset($2::jsonb) AS c(row_id text, subject text, sequence bigint, deleted boolean, event_at timestamptz)
      ORDER BY c.row_id COLLATE "C"
     ON CONFLICT (row_kind, row_id) DO UPDATE
        SET subject = excluded.subject, sequence = excluded.sequence, deleted = excluded.deleted,
            event_at = excluded.event_at, applied_at = now()
      WHERE CASE WHEN v.subject = excluded.subject THEN v.sequence <= excluded.sequence
                 ELSE v.event_at <= excluded.event_at END
     RETURNING v.row_id`,
    [kind, JSON.stringify(rows)],
  );
  return new Set(claimed.map((row) => row.row_id));
}
