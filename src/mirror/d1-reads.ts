import { asc, gt, inArray } from "drizzle-orm";
import { createDb } from "../db/client";
import { type BucketRow, buckets } from "../db/schema";

/**
 * What a resync reads from D1. Each row comes with its subject's `event_sequences.last` read in the same statement
 * (one statement is one consistent read): the snapshot is exactly the state that sequence number left, so recording
 * it as the row's version lets the stream carry on from there, skipping the events the snapshot already holds.
 * Lists of ids travel as one JSON parameter (`json_each`): D1 binds at most 100 parameters per statement.
 */

export interface SnapshotWithSequence {
  id: string;
  /** The JSON of migration 0020's snapshot views, as events carry it. */
  snapshot: string;
  subject: string;
  last: number;
}

export async function userSnapshots(
  d1: D1Database,
  after: string,
  limit: number,
): Promise<SnapshotWithSequence[]> {
  const { results } = await d1
    .prepare(
      `SELECT v.id AS id, v.snapshot AS snapshot, v.id AS subject, COALESCE(s.last, 0) AS last
         FROM event_user_snapshots v LEFT JOIN event_sequences s ON s.subject = v.id
        WHERE v.id > ?1 ORDER BY v.id LIMIT ?2`,
    )
    .bind(after, limit)
    .all<SnapshotWithSequence>();
  return results;
}

/** Uploaded files only: a file still being uploaded has no event yet, and the mirror shows none. */
export async function fileSnapshots(
  d1: D1Database,
  after: string,
  limit: number,
): Promise<SnapshotWithSequence[]> {
  const { results } = await d1
    .prepare(
      `SELECT f.id AS id, v.snapshot AS snapshot, COALESCE(f.uploaded_by_user_id, 'file:' || f.id) AS subject,
              COALESCE(s.last, 0) AS last
         FROM files f JOIN event_file_snapshots v ON v.id = f.id
         LEFT JOIN event_sequences s ON s.subject = COALESCE(f.uploaded_by_user_id, 'file:' || f.id)
        WHERE f.id > ?1 AND f.is_uploaded = 1 ORDER BY f.id LIMIT ?2`,
    )
    .bind(after, limit)
    .all<SnapshotWithSequence>();
  return results;
}

export interface Presence {
  id: string;
  /** Whether D1 has the row now. */
  present: number;
  /** The subject's last sequence now: a row D1 no longer has is recorded deleted as of it. */
  last: number | null;
}

/** Which of these users D1 has, each with its stream's last sequence, in one read. */
export async function usersPresent(d1: D1Database, ids: string[]): Promise<Presence[]> {
  const { results } = await d1
    .prepare(
      `SELECT j.value AS id, EXISTS (SELECT 1 FROM users u WHERE u.id = j.value) AS present, s.last AS last
         FROM json_each(?1) j LEFT JOIN event_sequences s ON s.subject = j.value`,
    )
    .bind(JSON.stringify(ids))
    .all<Presence>();
  return results;
}

/** Which of these files D1 has (uploaded), each with its subject's last sequence. */
export async function filesPresent(
  d1: D1Database,
  files: { id: string; subject: string }[],
): Promise<Presence[]> {
  const { results } = await d1
    .prepare(
      `SELECT json_extract(j.value, '$.id') AS id,
              EXISTS (SELECT 1 FROM files f WHERE f.id = json_extract(j.value, '$.id') AND f.is_uploaded = 1) AS present,
              s.last AS last
         FROM json_each(?1) j LEFT JOIN event_sequences s ON s.subject = json_extract(j.value, '$.subject')`,
    )
    .bind(JSON.stringify(files))
    .all<Presence>();
  return results;
}

export function bucketsPage(d1: D1Database, after: string, limit: number): Promise<BucketRow[]> {
  return createDb(d1)
    .select()
    .from(buckets)
    .where(gt(buckets.id, after))
    .orderBy(asc(buckets.id))
    .limit(limit)
    .all();
}

export async function bucketsByIds(d1: D1Database, ids: string[]): Promise<BucketRow[]> {
  const unique = [...new Set(ids)];
  const rows: BucketRow[] = [];
  // Under D1's 100 bound parameters.
  for (let i = 0; i < unique.length; i += 90) {
    const chunk = unique.slice(i, i + 90);
    rows.push(...(await createDb(d1).select().from(buckets).where(inArray(buckets.id, chunk)).all()));
  }
  return rows;
}
