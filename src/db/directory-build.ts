import { sha256Hex } from "../lib/crypto";
import { CLAIM_WINDOW_MS, type DirectoryKind } from "./directory";
import { BUILD_SOURCES, type BuildEntry, holdsValue } from "./directory-sources";
import { buildOf, DIRECTORY_LAYOUT_KEY, MAP_TTL_MS, type StoredSlotMap } from "./slot-map";
import { currentMap, home, type MoveScope, moveRefused } from "./slot-moves";

/**
 * The directory of a deployment that ran one shard, built from its rows so that the shard list can grow
 * (docs/scaling.md, "Growing from one shard"). With one shard nothing writes directory keys; a second shard needs
 * them for every user of the first. scripts/move-slots.mjs `--build-directory` drives the steps:
 *
 * 0. `pin` (slot-moves.ts), still with one shard: the map stores every slot in the home shard, and migration 0042's
 *    marker `directory.layout` is written as `{"build": 0}`. Nothing reads it while the list names one shard.
 * 1. The second shard is added to `AUTH_D1_SHARDS` and deployed. From then on every isolate reads the marker with
 *    the map (slot-map.ts): every change writes its keys (the claims and releases of directory.ts, as with several
 *    shards), but lookups read the home shard, which holds every slot, as with one shard (`readsDirectory`).
 * 2. `begin`: the marker records now. Once `graceMs` has passed, no request of the one-shard Worker is running.
 * 3. `copy`: the home shard's rows (BUILD_SOURCES), a page per call, each key written only if its owner still
 *    holds the value at that moment (one statement: the rows and the keys are in one database), over a key whose
 *    claim is older than the claim window (stale: its user cannot hold what the owner holds, the value is unique),
 *    never over a younger claim: that sign-up or change is in flight, fails on the shard's unique index and gives
 *    its claim back (or succeeds because the owner let the value go). Such rows are tried again once the pass is
 *    over, and again until no young claim stands in the way. Then the marker goes: lookups trust the directory.
 *
 * Why a change during the pass ends right: a change claims its new value before writing the row and gives the old
 * one back after, as with several shards; the pass's write checks the row in the same statement, so it never writes
 * a value the owner gave up, and a key it wrote for a value given up later goes with that change's release.
 */

export interface BuildCursor {
  /** The `since` of the build this pass began under: a pass from before a new `begin` does not count. */
  since: number;
  /** The source (index in BUILD_SOURCES) and the last rowid done; `source` past the end: the retries. */
  source: number;
  after: number;
  /** Rows (source, rowid) whose key another user's young claim held: tried again at the end. */
  retry: number[][];
}

export interface BuildResult {
  map: StoredSlotMap;
  /** When every isolate was asked to write keys (0: not begun); null: no build, the directory is complete. */
  since: number | null;
  cursor: BuildCursor | null;
  waitMs?: number;
  /** Keys written by this call. */
  keys?: number;
}

/** Statements a call runs at most (a Worker invocation may run 1,000 D1 queries). */
const BUDGET = 400;
/** Rows a page reads: at most two keys each, one JSON text a statement (D1 binds 100 values). */
const PAGE = 100;
/** Rows kept for another try before the pass goes on (the cursor travels in every call). */
const RETRY_CAP = 200;

async function readMarker(scope: MoveScope): Promise<string | undefined> {
  const row = await home(scope)
    .prepare("SELECT value FROM service_settings WHERE key = ?")
    .bind(DIRECTORY_LAYOUT_KEY)
    .first<{ value: string }>();
  return row?.value;
}

/** Where the build is: the map and the marker's `since` (null: no build under way). */
export async function buildStatus(scope: MoveScope): Promise<{ map: StoredSlotMap; since: number | null }> {
  const [map, marker] = await Promise.all([currentMap(scope), readMarker(scope)]);
  return { map, since: buildOf(marker)?.since ?? null };
}

/** Step 2: the build (re)starts now; its pass may begin once `graceMs` has passed. */
export async function buildBegin(scope: MoveScope): Promise<BuildResult> {
  if (scope.names.length < 2) {
    throw moveRefused(
      "the directory is built by a Worker whose AUTH_D1_SHARDS names the new shard: pin, add it, deploy, then build",
    );
  }
  const [map, marker] = await Promise.all([currentMap(scope), readMarker(scope)]);
  const building = buildOf(marker);
  if (!building && marker !== undefined) {
    throw moveRefused("the directory keeps its old layout (every key at home): re-key it instead");
  }
  if (map.version === 0 || map.moving || map.leftover || map.ranges.some(([, , s]) => s !== scope.names[0])) {
    throw moveRefused(
      "the directory is built while every slot is in the home shard (a map pinned with one shard); " +
        (building ? "finish the move under way first" : "this one has none to build"),
    );
  }
  const value = JSON.stringify({ build: scope.now });
  const d1 = home(scope);
  await (marker === undefined
    ? d1
        .prepare("INSERT INTO service_settings (key, value, updated_at) VALUES (?, ?, ?)")
        .bind(DIRECTORY_LAYOUT_KEY, value, scope.now)
    : d1
        .prepare("UPDATE service_settings SET value = ?, updated_at = ? WHERE key = ? AND value = ?")
        .bind(value, scope.now, DIRECTORY_LAYOUT_KEY, marker)
  ).run();
  return { map, since: scope.now, cursor: null };
}

interface Written {
  keys: number;
  /** Statements run. */
  spent: number;
  /** Rows whose key another user's young claim holds while the row holds the value: the claim's time, by row. */
  blocked: Map<string, number>;
}

/**
 * The entries' keys, in one batch: for each kind, the write (only where the owner holds the value now, over a
 * stale claim of another user's, never over a young one) and the read of the keys a young claim kept.
 */
async function writeEntries(d1: D1Database, entries: BuildEntry[], now: number): Promise<Written> {
  const byKind = new Map<DirectoryKind, unknown[][]>();
  const refByKey = new Map<string, string>();
  for (const entry of entries) {
    const key = await sha256Hex(`${entry.kind}:${entry.value}`);
    refByKey.set(key, entry.ref);
    byKind.set(entry.kind, [...(byKind.get(entry.kind) ?? []), [key, entry.owner, entry.a, entry.b ?? null]]);
  }
  // One JSON text a statement (D1 binds at most 100 values): `k` the key, `o` its owner, `a`/`b` the value's parts.
  const from =
    "(SELECT json_extract(value, '$[0]') AS k, json_extract(value, '$[1]') AS o, json_extract(value, '$[2]') AS a, " +
    "json_extract(value, '$[3]') AS b FROM json_each(?)) j";
  const statements = [...byKind].flatMap(([kind, rows]) => {
    const json = JSON.stringify(rows);
    return [
      d1
        .prepare(
          `INSERT INTO directory (key, kind, user_id, claimed_at) SELECT j.k, ?, j.o, 0 FROM ${from} WHERE ${holdsValue(kind)} ` +
            "ON CONFLICT (key) DO UPDATE SET user_id = excluded.user_id, claimed_at = 0 " +
            "WHERE directory.user_id <> excluded.user_id AND directory.claimed_at < ?",
        )
        .bind(kind, json, now - CLAIM_WINDOW_MS),
      d1
        .prepare(
          `SELECT j.k AS key, d.claimed_at AS at FROM ${from} JOIN directory d ON d.key = j.k ` +
            `WHERE d.user_id <> j.o AND ${holdsValue(kind)}`,
        )
        .bind(json),
    ];
  });
  const written: Written = { keys: 0, spent: statements.length, blocked: new Map() };
  if (statements.length === 0) return written;
  const results = await d1.batch<{ key: string; at: number }>(statements);
  results.forEach((result, index) => {
    if (index % 2 === 0) written.keys += result.meta.changes;
    else for (const row of result.results) written.blocked.set(refByKey.get(row.key)!, row.at);
  });
  return written;
}

const refOf = (source: number, rowid: number) => `${source}:${rowid}`;

/** Step 3: a page of the pass (or of its retries), once the grace has passed since `begin`; the marker goes at the end. */
export async function buildCopy(
  scope: MoveScope,
  { graceMs, cursor }: { graceMs: number; cursor: BuildCursor | null },
): Promise<BuildResult> {
  const [map, marker] = await Promise.all([currentMap(scope), readMarker(scope)]);
  const building = buildOf(marker);
  if (!building) throw moveRefused("no directory build is under way");
  if (building.since === 0) throw moveRefused("the build has not begun: begin it first");
  const wait = building.since + Math.max(graceMs, 2 * MAP_TTL_MS) - scope.now;
  if (wait > 0) return { map, since: building.since, cursor, waitMs: wait };
  if (cursor && cursor.since !== building.since) {
    throw moveRefused("the build began again since this pass did: start the copy over (cursor null)");
  }
  const at: BuildCursor = cursor ?? { since: building.since, source: 0, after: 0, retry: [] };
  const d1 = home(scope);
  let [spent, keys] = [0, 0];
  let earliest = scope.now;
  // The pass, page by page, until the budget is spent or the retries are many.
  while (at.source < BUILD_SOURCES.length && spent < BUDGET && at.retry.length < RETRY_CAP) {
    const source = BUILD_SOURCES[at.source]!;
    const { results } = await d1
      .prepare(`${source.scan} AND t.rowid > ? ORDER BY t.rowid LIMIT ${PAGE}`)
      .bind(at.after)
      .all<Record<string, unknown>>();
    const written = await writeEntries(
      d1,
      results.flatMap((row) => source.entries(row, refOf(at.source, row.r as number))),
      scope.now,
    );
    [spent, keys] = [spent + 1 + written.spent, keys + written.keys];
    for (const [ref, claimedAt] of written.blocked) {
      at.retry.push(ref.split(":").map(Number));
      earliest = Math.min(earliest, claimedAt);
    }
    if (results.length === PAGE) at.after = results.at(-1)!.r as number;
    else [at.source, at.after] = [at.source + 1, 0];
  }
  if (at.source < BUILD_SOURCES.length && at.retry.length < RETRY_CAP) {
    return { map, since: building.since, cursor: at, keys };
  }
  // The rows a young claim held, read and written again: most such claims are gone by now (their request failed).
  const retried = await retry(d1, at.retry, scope.now);
  keys += retried.keys;
  at.retry = retried.still;
  if (at.retry.length > 0) {
    // A claim in flight usually goes within a second (its sign-up fails on the unique index); one that stays is
    // stale once older than the claim window. The longer it has stood, the longer the wait (1 s to a minute).
    const waitMs = Math.min(60_000, Math.max(1000, scope.now - Math.min(earliest, retried.earliest)));
    return { map, since: building.since, cursor: at, keys, waitMs };
  }
  if (at.source < BUILD_SOURCES.length) return { map, since: building.since, cursor: at, keys };
  // Done: the marker goes (if still this build's), and lookups trust the directory from the next map read on.
  const removed = await d1
    .prepare("DELETE FROM service_settings WHERE key = ? AND value = ?")
    .bind(DIRECTORY_LAYOUT_KEY, marker)
    .run();
  if (removed.meta.changes !== 1) throw moveRefused("the build began again meanwhile: start the copy over");
  return { map, since: null, cursor: null, keys };
}

/** The rows of `refs` read again and their keys written; what a young claim still holds stays. */
async function retry(
  d1: D1Database,
  refs: number[][],
  now: number,
): Promise<{ keys: number; still: number[][]; earliest: number }> {
  const out = { keys: 0, still: [] as number[][], earliest: now };
  const bySource = new Map<number, number[]>();
  for (const [source, rowid] of refs) {
    // A cursor's row of no source (not one this Worker gave) is nothing to try again.
    if (source === undefined || rowid === undefined || !BUILD_SOURCES[source]) continue;
    bySource.set(source, [...(bySource.get(source) ?? []), rowid]);
  }
  for (const [index, rowids] of bySource) {
    const source = BUILD_SOURCES[index]!;
    const { results } = await d1
      .prepare(`${source.scan} AND t.rowid IN (SELECT value FROM json_each(?))`)
      .bind(JSON.stringify(rowids))
      .all<Record<string, unknown>>();
    const written = await writeEntries(
      d1,
      results.flatMap((row) => source.entries(row, refOf(index, row.r as number))),
      now,
    );
    out.keys += written.keys;
    for (const [ref, claimedAt] of written.blocked) {
      out.still.push(ref.split(":").map(Number));
      out.earliest = Math.min(out.earliest, claimedAt);
    }
  }
  return out;
}
