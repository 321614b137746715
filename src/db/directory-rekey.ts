import { SLOTS } from "./shards";
import { DIRECTORY_LAYOUT_KEY, homeFromOf, MAP_TTL_MS, SLOT_MAP_KEY, type StoredSlotMap } from "./slot-map";
import { binding, currentMap, home, type MoveScope, moveRefused, pin, spread, swap } from "./slot-moves";

/**
 * The re-key of the directory's old layout (docs/scaling.md, "A deployment that ran several shards before"): the
 * keys a deployment wrote at home before the directory was sharded by key go to their slots' shards, in increasing
 * slot order, a range of slots of one shard at a time; migration 0042's marker says where it is (slots below N
 * re-keyed) and goes when every slot is. scripts/move-slots.mjs `--rekey-directory` drives the steps:
 *
 * 1. `fence`: the next range (from N on, all in one shard) is fenced in the slot map, as a move whose source is its
 *    target: requests that need its keys (or its users) wait inside the request. A range of the home shard has its
 *    keys in place already: N simply passes it, nothing fenced.
 * 2. `copy`: once the fence has settled (`graceMs`, as a move's copy), home's keys of the range (a range of the
 *    primary key: no scan) are written in their shard (insert or replace: a page run twice writes the same rows),
 *    then removed from home, a page per call. While
 *    fenced nothing else writes them, so a step cut short and run again finishes the same work.
 * 3. `switch`: in one transaction the fence is lifted and N passes the range (the marker goes at 4,096); the waiting
 *    requests go on in the key's slot's shard.
 */

export interface RekeyCursor {
  phase: "copy" | "purge";
  /** The last key done ("": none yet). */
  after: string;
}

export interface RekeyResult {
  map: StoredSlotMap;
  /** The first slot whose keys are still at home (4,096: none, the marker is gone). */
  homeFrom: number;
  cursor: RekeyCursor | null;
  waitMs?: number;
  keys?: number;
}

/** Statements a call runs at most (a Worker invocation may run 1,000 D1 queries). */
const BUDGET = 400;

async function readHomeFrom(scope: MoveScope): Promise<number> {
  const row = await home(scope)
    .prepare("SELECT value FROM service_settings WHERE key = ?")
    .bind(DIRECTORY_LAYOUT_KEY)
    .first<{ value: string }>();
  return homeFromOf(row?.value);
}

/** Where the re-key is: the map and the first slot still at home. */
export async function rekeyStatus(scope: MoveScope): Promise<{ map: StoredSlotMap; homeFrom: number }> {
  return { map: await currentMap(scope), homeFrom: await readHomeFrom(scope) };
}

/** Step 1: the range from the marker's N to `last` (all in one shard) fenced, or passed if it is the home shard's. */
export async function rekeyFence(scope: MoveScope, { last }: { last: number }): Promise<RekeyResult> {
  const first = await readHomeFrom(scope);
  if (first >= SLOTS) throw moveRefused("the directory is re-keyed already");
  if (!(Number.isInteger(last) && first <= last && last < SLOTS)) {
    throw moveRefused(`last must be a slot from ${first} (the first still at home) to 4095`);
  }
  const map = await pin(scope);
  if (map.moving || map.leftover) throw moveRefused("another move is under way: finish it first");
  const owner = spread(map.ranges);
  const shard = owner[first]!;
  if (owner.slice(first, last + 1).some((name) => name !== shard)) {
    throw moveRefused(`slots ${first}–${last} are not all in one shard: re-key each shard's part on its own`);
  }
  if (shard === scope.names[0]) {
    const done = await advance(scope, map, first, last + 1);
    return { map: done, homeFrom: last + 1, cursor: null };
  }
  const fenced = await swap(home(scope), map, {
    ...map,
    version: map.version + 1,
    moving: { first, last, from: shard, to: shard, since: scope.now, copied: false, rekey: true },
  });
  return { map: fenced, homeFrom: first, cursor: null };
}

/**
 * The marker moved from `from` to `to` (deleted at 4,096) and the fence lifted, in one transaction: both statements
 * hold only if the map is still `map`'s version, so a second mover changes neither.
 */
async function advance(
  scope: MoveScope,
  map: StoredSlotMap,
  from: number,
  to: number,
): Promise<StoredSlotMap> {
  const d1 = home(scope);
  const next: StoredSlotMap = { ...map, version: map.version + 1, moving: null };
  const same = `(SELECT json_extract(value, '$.version') FROM service_settings WHERE key = ?) = ?`;
  const [marker, swapped] = await d1.batch([
    to >= SLOTS
      ? d1
          .prepare(`DELETE FROM service_settings WHERE key = ? AND ${same}`)
          .bind(DIRECTORY_LAYOUT_KEY, SLOT_MAP_KEY, map.version)
      : d1
          .prepare(`UPDATE service_settings SET value = ?, updated_at = ? WHERE key = ? AND ${same}`)
          .bind(JSON.stringify(to), scope.now, DIRECTORY_LAYOUT_KEY, SLOT_MAP_KEY, map.version),
    d1
      .prepare(
        "UPDATE service_settings SET value = ?, updated_at = ? WHERE key = ? AND json_extract(value, '$.version') = ?",
      )
      .bind(JSON.stringify(next), scope.now, SLOT_MAP_KEY, map.version),
  ]);
  if (marker!.meta.changes !== 1 || swapped!.meta.changes !== 1) {
    throw moveRefused(
      `the slot map or the re-key changed meanwhile (another mover?): read them again (at ${from})`,
    );
  }
  return next;
}

/**
 * The keys of slots `first`–`last` as a range of the primary key: a key is lower-case hex, its slot its first three
 * digits, so the range is read through the index, never by scanning the directory ("g" sorts after every digit).
 */
const keyRange = (first: number, last: number) =>
  [
    first.toString(16).padStart(3, "0"),
    last === SLOTS - 1 ? "g" : (last + 1).toString(16).padStart(3, "0"),
  ] as const;

/** Keys a page: each page is one read and one batch (inserts of 24 rows: D1 binds 100 values a statement). */
const PAGE = 96;
const ROWS_PER_INSERT = 24;

/** Step 2: a page of the copy of home's keys of the fenced range to their shard, then of their removal from home. */
export async function rekeyCopy(
  scope: MoveScope,
  { graceMs, cursor }: { graceMs: number; cursor: RekeyCursor | null },
): Promise<RekeyResult> {
  const { map, homeFrom } = await rekeyStatus(scope);
  const moving = map.moving;
  if (!moving?.rekey) throw moveRefused("no re-key is fenced: fence a range first");
  const wait = moving.since + Math.max(graceMs, 2 * MAP_TTL_MS) - scope.now;
  if (wait > 0) return { map, homeFrom, cursor, waitMs: wait };
  const [source, target] = [home(scope), binding(scope, moving.to)];
  const [low, high] = keyRange(moving.first, moving.last);
  let at: RekeyCursor = cursor ?? { phase: "copy", after: "" };
  let [spent, keys] = [0, 0];
  while (spent < BUDGET) {
    const { results } = await source
      .prepare(
        `SELECT key, kind, user_id, claimed_at FROM directory WHERE key >= ? AND key > ? AND key < ? ORDER BY key LIMIT ${PAGE}`,
      )
      .bind(low, at.after, high)
      .all<{ key: string; kind: string; user_id: string; claimed_at: number }>();
    if (results.length > 0) {
      const statements =
        at.phase === "copy"
          ? Array.from({ length: Math.ceil(results.length / ROWS_PER_INSERT) }, (_, i) => {
              const rows = results.slice(i * ROWS_PER_INSERT, (i + 1) * ROWS_PER_INSERT);
              return target
                .prepare(
                  `INSERT OR REPLACE INTO directory (key, kind, user_id, claimed_at) VALUES ${rows.map(() => "(?, ?, ?, ?)").join(", ")}`,
                )
                .bind(...rows.flatMap((row) => [row.key, row.kind, row.user_id, row.claimed_at]));
            })
          : [
              source
                .prepare(`DELETE FROM directory WHERE key IN (${results.map(() => "?").join(",")})`)
                .bind(...results.map((row) => row.key)),
            ];
      await (at.phase === "copy" ? target : source).batch(statements);
      keys += results.length;
    }
    spent += 2;
    if (results.length === PAGE) at = { ...at, after: results.at(-1)!.key };
    else if (at.phase === "copy") at = { phase: "purge", after: "" };
    else {
      const done = await swap(home(scope), map, {
        ...map,
        version: map.version + 1,
        moving: { ...moving, copied: true },
      });
      return { map: done, homeFrom, cursor: null, keys };
    }
  }
  return { map, homeFrom, cursor: at, keys };
}

/** Step 3: the fence lifted and the marker past the range, at once. */
export async function rekeySwitch(scope: MoveScope): Promise<RekeyResult> {
  const { map, homeFrom } = await rekeyStatus(scope);
  const moving = map.moving;
  if (!moving?.rekey || !moving.copied)
    throw moveRefused("nothing is re-keyed: fence and copy a range first");
  const done = await advance(scope, map, homeFrom, moving.last + 1);
  return { map: done, homeFrom: moving.last + 1, cursor: null };
}
