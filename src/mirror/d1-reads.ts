import { asc, gt, inArray } from "drizzle-orm";
import { createDb } from "../db/client";
import { type BucketRow, buckets } from "../db/schema";
import { eachShard, type Shards } from "../db/shards";

/**
 * What a resync reads from D1. Each row comes with its subject's `event_sequences.last` read in the same statement
 * (one statement is one consistent read): the snapshot is exactly the state that sequence number left, so recording
 * it as the row's version lets the stream carry on from there, skipping the events the snapshot already holds.
 * Lists of ids travel as one JSON parameter (`json_each`): D1 binds at most 100 parameters per statement.
 *
 * With several shards (src/db/shards.ts) a user, its files and its stream's sequence are all in the user's shard, so
 * each row's snapshot and sequence still come from one statement; pages are merged across shards in id order, and
 * buckets, global, are read from the home database.
 */

export interface SnapshotWithSequence {
  id: string;
  /** The JSON of migration 0020's snapshot views, as events carry it. */
  snapshot: string;
  subject: string;
  last: number;
}

async function userSnapshotsIn(
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
async function fileSnapshotsIn(
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

/** Which of these users a shard has, each with its stream's last sequence, in one read. */
async function usersPresentIn(d1: D1Database, ids: string[]): Promise<Presence[]> {
  const { results } = await d1
    .prepare(
      `SELECT j.value AS id, EXISTS (SELECT 1 FROM users u WHERE u.id = j.value) AS present, s.last AS last
         FROM json_each(?1) j LEFT JOIN event_sequences s ON s.subject = j.value`,
    )
    .bind(JSON.stringify(ids))
    .all<Presence>();
  return results;
}

/** Which of these files a shard has (uploaded), each with its subject's last sequence there. */
async function filesPresentIn(d1: D1Database, files: { id: string; subject: string }[]): Promise<Presence[]> {
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

/** SQLite's order of text (BINARY), for the ids a page is keyed on. */
const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Every shard's first `limit` rows after `after`, merged in id order, the first `limit` of them: one page. */
async function mergedPage(
  shards: Shards,
  limit: number,
  read: (d1: D1Database) => Promise<SnapshotWithSequence[]>,
): Promise<SnapshotWithSequence[]> {
  const parts = await eachShard(shards, (_db, index) => read(shards.allD1[index]!));
  return parts.flat().sort(byId).slice(0, limit);
}

export function userSnapshots(shards: Shards, after: string, limit: number) {
  return mergedPage(shards, limit, (d1) => userSnapshotsIn(d1, after, limit));
}

export function fileSnapshots(shards: Shards, after: string, limit: number) {
  return mergedPage(shards, limit, (d1) => fileSnapshotsIn(d1, after, limit));
}

/** Which of these users D1 has: each asked of its own shard, where its stream's sequence is too. */
export async function usersPresent(shards: Shards, ids: string[]): Promise<Presence[]> {
  const groups = new Map<number, string[]>();
  for (const id of ids) {
    const index = shards.indexOfUser(id);
    groups.set(index, [...(groups.get(index) ?? []), id]);
  }
  const parts = await Promise.all(
    [...groups].map(([index, group]) => usersPresentIn(shards.allD1[index]!, group)),
  );
  return parts.flat();
}

/**
 * Which of these files D1 has (uploaded), each with its subject's last sequence. A file that is gone names no shard,
 * so every shard is asked: the file is present if one has it, and its subject's sequence is the one shard that has
 * a row for that subject (a stream is written in one shard only).
 */
export async function filesPresent(
  shards: Shards,
  files: { id: string; subject: string }[],
): Promise<Presence[]> {
  const parts = await eachShard(shards, async (_db, index) => {
    const rows = await filesPresentIn(shards.allD1[index]!, files);
    return new Map(rows.map((row) => [row.id, row]));
  });
  return files.map((file) => {
    const answers = parts.map((part) => part.get(file.id));
    const lasts = answers.flatMap((answer) => (answer?.last == null ? [] : [answer.last]));
    return {
      id: file.id,
      present: answers.some((answer) => answer?.present) ? 1 : 0,
      last: lasts.length > 0 ? Math.max(...lasts) : null,
    };
  });
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
