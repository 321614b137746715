import { MOVED_TABLES, type MovedTable, slotOfRow } from "./slot-tables";

/**
 * The rows of a range of slots in one database, copied to another or removed (slot-moves.ts), a page at a time:
 * each call does at most `budget` statements (a Worker invocation may run 1,000 D1 queries) and returns where the
 * next one starts. Rows are found by scanning each table in rowid order (a row's slot is SHA-256 of its owner, which
 * SQLite cannot compute), reading only the owner column, then read whole by rowid and written in batches: one
 * batch is one transaction, and it mutes the events of the owners it touches (`event_mutes`, migration 0020), so a
 * move announces nothing: no `user.created` in the target, no `user.deleted` in the source.
 */

export interface SlotRange {
  first: number;
  last: number;
}

/** Where a sweep goes on: the table (index in `MOVED_TABLES`, in the sweep's order) and the last rowid scanned. */
export interface SweepCursor {
  table: number;
  after: number;
}

/** D1 binds at most 100 values a statement. */
const IDS_PER_STATEMENT = 90;
/** Rowids scanned a statement. */
const SCAN_PAGE = 1000;

interface Found {
  rowids: number[];
  /** The owner of each rowid found (the events a batch mutes). */
  owners: Map<number, string>;
  last: number;
  done: boolean;
}

/** One page of a table's rows in `range`: their rowids and owners. */
async function scan(d1: D1Database, moved: MovedTable, range: SlotRange, after: number): Promise<Found> {
  const id = moved.rule === "file" ? "t.id" : "NULL";
  const stays = moved.stays ? ` AND NOT (${moved.stays})` : "";
  const { results } = await d1
    .prepare(
      `SELECT t.rowid AS r, ${moved.owner} AS o, ${id} AS i FROM ${moved.table} t ${moved.join ?? ""} WHERE t.rowid > ?${stays} ORDER BY t.rowid LIMIT ${SCAN_PAGE}`,
    )
    .bind(after)
    .all<{ r: number; o: string | null; i: string | null }>();
  const found: Found = { rowids: [], owners: new Map(), last: after, done: results.length < SCAN_PAGE };
  for (const row of results) {
    found.last = row.r;
    const slot = slotOfRow(moved.rule, row.o, row.i);
    if (slot === undefined || slot < range.first || slot > range.last) continue;
    found.rowids.push(row.r);
    found.owners.set(row.r, row.o!);
  }
  return found;
}

const marks = (n: number) => Array.from({ length: n }, () => "?").join(",");

/** Statements that mute, then unmute, the events of `owners` around `work` in one batch. */
function muted(
  d1: D1Database,
  owners: readonly string[],
  work: D1PreparedStatement[],
): D1PreparedStatement[] {
  const mute: D1PreparedStatement[] = [];
  const unmute: D1PreparedStatement[] = [];
  for (let i = 0; i < owners.length; i += IDS_PER_STATEMENT) {
    const part = owners.slice(i, i + IDS_PER_STATEMENT);
    mute.push(
      d1
        .prepare(`INSERT OR IGNORE INTO event_mutes (subject) VALUES ${part.map(() => "(?)").join(",")}`)
        .bind(...part),
    );
    unmute.push(d1.prepare(`DELETE FROM event_mutes WHERE subject IN (${marks(part.length)})`).bind(...part));
  }
  return [...mute, ...work, ...unmute];
}

/** The bucket rows `files` rows name, copied first: a file's shard keeps its bucket's row for the foreign key. */
async function copyBuckets(
  source: D1Database,
  target: D1Database,
  rowids: readonly number[],
): Promise<number> {
  const { results } = await source
    .prepare(
      `SELECT b.* FROM buckets b WHERE b.id IN (SELECT bucket_id FROM files WHERE rowid IN (${marks(rowids.length)}))`,
    )
    .bind(...rowids)
    .all<Record<string, unknown>>();
  if (results.length === 0) return 1;
  await target.batch(results.map((row) => insertOf(target, "buckets", row, "INSERT OR IGNORE")));
  return 2;
}

function insertOf(
  d1: D1Database,
  table: string,
  row: Record<string, unknown>,
  verb = "INSERT",
): D1PreparedStatement {
  const columns = Object.keys(row);
  return d1
    .prepare(
      `${verb} INTO ${table} (${columns.map((c) => `"${c}"`).join(",")}) VALUES (${marks(columns.length)})`,
    )
    .bind(...columns.map((c) => row[c] ?? null));
}

export type SweepAction = "copy" | "remove";

export interface SweepResult {
  /** Where the next call goes on; null: the range is done. */
  next: SweepCursor | null;
  /** Rows copied or removed, by table. */
  rows: Record<string, number>;
}

/**
 * Copies the rows of `range` from `source` to `target` (tables in `MOVED_TABLES` order), or removes them from
 * `source` (the reverse order: a row before the rows its foreign keys name), from `cursor` on, for at most about
 * `budget` statements.
 */
export async function sweep(
  action: SweepAction,
  source: D1Database,
  target: D1Database | null,
  range: SlotRange,
  cursor: SweepCursor | null,
  budget: number,
): Promise<SweepResult> {
  const order = action === "copy" ? MOVED_TABLES : [...MOVED_TABLES].reverse();
  const rows: Record<string, number> = {};
  let { table, after } = cursor ?? { table: 0, after: 0 };
  let spent = 0;
  while (table < order.length) {
    if (spent >= budget) return { next: { table, after }, rows };
    const moved = order[table]!;
    const found = await scan(source, moved, range, after);
    spent += 1;
    for (let i = 0; i < found.rowids.length; i += IDS_PER_STATEMENT) {
      const part = found.rowids.slice(i, i + IDS_PER_STATEMENT);
      const owners = [...new Set(part.map((rowid) => found.owners.get(rowid)!))];
      if (action === "copy") {
        if (moved.table === "files") spent += await copyBuckets(source, target!, part);
        const { results } = await source
          .prepare(`SELECT * FROM ${moved.table} WHERE rowid IN (${marks(part.length)}) ORDER BY rowid`)
          .bind(...part)
          .all<Record<string, unknown>>();
        await target!.batch(
          muted(
            target!,
            owners,
            results.map((row) => insertOf(target!, moved.table, row)),
          ),
        );
      } else {
        await source.batch(
          muted(source, owners, [
            source.prepare(`DELETE FROM ${moved.table} WHERE rowid IN (${marks(part.length)})`).bind(...part),
          ]),
        );
      }
      spent += 2;
      rows[moved.table] = (rows[moved.table] ?? 0) + part.length;
    }
    if (found.done) [table, after] = [table + 1, 0];
    else after = found.last;
  }
  return { next: null, rows };
}
