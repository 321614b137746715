import type { Db } from "../db/client";
import { eachShard, type Shards } from "../db/shards";

/**
 * The admin lists over every shard (src/db/shards.ts): each shard reads its own next rows in the list's order, from
 * the same position (keyset: the sort key and the id), and the rows are merged in that order. The first `take` rows
 * of the merge are the list's next `take` rows: none of them can be past a row its shard did not return. For the
 * operator only, never on a user's request path.
 */

/**
 * Text in SQLite's order (BINARY: the bytes of UTF-8, i.e. code points), not JavaScript's (UTF-16 code units, which
 * puts U+E000–U+FFFF after the surrogates of astral characters): merged rows must come in the order each shard sorted.
 */
export function compareText(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** A UTF-16 unit's rank in code point order: surrogates (astral characters) above the rest of the BMP. */
const codePointRank = (unit: number) => (unit < 0xd800 ? unit : unit < 0xe000 ? unit + 0x2000 : unit - 0x800);

export interface MergeOptions<Row> {
  /**
   * The shard's next rows in the list's order, at most `limit`: after `after` (a row this shard returned before), or
   * from the list's starting position when `after` is undefined.
   */
  read: (db: Db, after: Row | undefined, limit: number) => Promise<Row[]>;
  /** The list's order, as the shards' ORDER BY sorts (negative: `a` first). */
  compare: (a: Row, b: Row) => number;
  /** How many rows the merge returns at most. */
  take: number;
  /** Rows a shard reads at a time (default `take`: one read per shard for a page). */
  chunk?: number;
  /** The shards to read (default every one): a list some shards cannot hold rows of. */
  only?: (index: number) => boolean;
}

/** The first `take` rows of the merged list. */
export async function mergeAcross<Row>(shards: Shards, options: MergeOptions<Row>): Promise<Row[]> {
  const { read, compare, take } = options;
  const chunk = Math.max(1, Math.min(options.chunk ?? take, take));
  if (take <= 0) return [];
  const wanted = (index: number) => options.only?.(index) ?? true;
  const buffers = await eachShard(shards, async (db, index) =>
    wanted(index) ? read(db, undefined, chunk) : [],
  );
  const more = buffers.map((rows) => rows.length === chunk);
  const next = buffers.map(() => 0);
  const merged: Row[] = [];
  while (merged.length < take) {
    // A shard whose rows ran out while it may hold more reads on before anything is chosen: its next row may be first.
    for (const [index, rows] of buffers.entries()) {
      if (next[index]! < rows.length || !more[index]) continue;
      const refill = await read(shards.all[index]!, rows.at(-1), chunk);
      buffers[index] = refill;
      next[index] = 0;
      more[index] = refill.length === chunk;
    }
    let best = -1;
    for (const [index, rows] of buffers.entries()) {
      const row = rows[next[index]!];
      if (row === undefined) continue;
      if (best < 0 || compare(row, buffers[best]![next[best]!]!) < 0) best = index;
    }
    if (best < 0) break;
    merged.push(buffers[best]![next[best]!]!);
    next[best] = next[best]! + 1;
  }
  return merged;
}
