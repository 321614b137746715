import { AppError } from "../errors";
import { SLOTS } from "./shards";
import {
  DIRECTORY_LAYOUT_KEY,
  defaultRanges,
  MAP_TTL_MS,
  readRouting,
  readStoredMap,
  SLOT_MAP_KEY,
  type SlotRange,
  type StoredSlotMap,
  slotMapOf,
} from "./slot-map";
import { type SweepCursor, type SweepResult, sweep } from "./slot-rows";

/**
 * Moving slots between shards on a populated deployment (docs/scaling.md, "Growing the shard list"), one step per
 * call so that each stays within a Worker invocation's 1,000 D1 queries; scripts/move-slots.mjs drives them:
 *
 * 1. `pin`: the stored map is written from today's split (once), so that the list may grow without moving anything.
 * 2. `fence`: a range of slots, all in one shard, is marked moving to another. Requests that reach it from then on
 *    wait inside the request (src/http/slot-fence.ts) instead of reading or writing it.
 * 3. `copy`: once every isolate has seen the fence and every request that began before it has ended (`graceMs`,
 *    at least the map's lifetime in an isolate), the target's rows of the range (an earlier attempt's) are removed,
 *    then the source's are copied, a page per call.
 * 4. `switch`: the range belongs to the target; waiting requests go on there.
 * 5. `purge`: the source's copies are removed, a page per call.
 * `abort` instead of `switch` removes what the copy wrote in the target and lifts the fence: nothing moved.
 *
 * Each step is a compare-and-swap on the map's version, so two movers cannot interleave: the second one's step fails.
 */

export const moveRefused = (message: string) => new AppError("invalid-request", message);

/** A fence of the directory's re-key is finished by its own steps (directory-rekey.ts), never copied as a move. */
function notRekey(moving: StoredSlotMap["moving"]): StoredSlotMap["moving"] {
  if (moving?.rekey) throw moveRefused("the directory's re-key holds the fence: run it again to finish it");
  return moving;
}

/** Writes `next` if the stored map is still `prev` (its version), else refuses. */
export async function swap(
  home: D1Database,
  prev: StoredSlotMap | null,
  next: StoredSlotMap,
): Promise<StoredSlotMap> {
  const value = JSON.stringify(next);
  const result = prev
    ? await home
        .prepare(
          "UPDATE service_settings SET value = ?, updated_at = ? WHERE key = ? AND json_extract(value, '$.version') = ?",
        )
        .bind(value, Date.now(), SLOT_MAP_KEY, prev.version)
        .run()
    : await home
        .prepare(
          "INSERT INTO service_settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
        )
        .bind(SLOT_MAP_KEY, value, Date.now())
        .run();
  if (result.meta.changes !== 1)
    throw moveRefused("the slot map changed meanwhile (another mover?): read it again");
  return next;
}

/** The owner name of every slot, from ranges; and back, adjacent slots of one shard merged. */
export const spread = (ranges: readonly SlotRange[]) => {
  const owner: string[] = [];
  for (const [first, last, shard] of ranges) for (let slot = first; slot <= last; slot++) owner[slot] = shard;
  return owner;
};
function gather(owner: readonly string[]): SlotRange[] {
  const ranges: [number, number, string][] = [];
  owner.forEach((shard, slot) => {
    const open = ranges.at(-1);
    if (open && open[2] === shard) open[1] = slot;
    else ranges.push([slot, slot, shard]);
  });
  return ranges;
}

export interface MoveScope {
  env: object;
  /** `AUTH_D1_SHARDS`, home first. */
  names: readonly string[];
  now: number;
}

export const home = (scope: MoveScope) => binding(scope, scope.names[0]!);
export function binding(scope: MoveScope, name: string): D1Database {
  const d1 = (scope.env as Record<string, unknown>)[name] as D1Database | undefined;
  if (!d1 || scope.names.indexOf(name) < 0)
    throw moveRefused(`${name} is not a shard of this Worker (AUTH_D1_SHARDS)`);
  return d1;
}

/** The stored map, or the default split (version 0) when none is stored. */
export async function currentMap(scope: MoveScope): Promise<StoredSlotMap> {
  return (
    (await readStoredMap(home(scope))) ?? {
      version: 0,
      ranges: defaultRanges(scope.names),
      moving: null,
      leftover: null,
    }
  );
}

/**
 * Step 1: the stored map from today's split, once; the stored one as it is after that. With one shard, the
 * directory's marker too (directory-build.ts): the Worker that lists a second shard next reads lookups from the home
 * shard until the directory is built, since nothing wrote it with one shard. Nothing reads the marker with one shard.
 */
export async function pin(scope: MoveScope): Promise<StoredSlotMap> {
  if (scope.names.length === 1) {
    await home(scope)
      .prepare(
        "INSERT INTO service_settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
      )
      .bind(DIRECTORY_LAYOUT_KEY, JSON.stringify({ build: 0 }), scope.now)
      .run();
  }
  const stored = await readStoredMap(home(scope));
  if (stored) return stored;
  return swap(home(scope), null, {
    version: 1,
    ranges: defaultRanges(scope.names),
    moving: null,
    leftover: null,
  });
}

/** Step 2: the range `first`–`last`, all in one shard, fenced for a move to `to`. */
export async function fence(
  scope: MoveScope,
  { first, last, to }: { first: number; last: number; to: string },
): Promise<StoredSlotMap> {
  binding(scope, to);
  // A move carries the directory keys of its slots from the source; in the old layout they are all at home, not in
  // their slots' shards (slot-map.ts `directoryAtHome`): moving slots would split them from the rest.
  const routing = await readRouting(home(scope));
  if (routing.directoryBuilding) {
    throw moveRefused("the directory is being built: finish it (move-slots.mjs --build-directory) first");
  }
  if (routing.directoryHomeFrom < SLOTS) {
    throw moveRefused(
      "the directory keeps its old layout (every key at home): re-key it before moving slots",
    );
  }
  const stored = await pin(scope);
  if (stored.moving || stored.leftover)
    throw moveRefused("another move is under way: finish or abort it first");
  if (!(Number.isInteger(first) && Number.isInteger(last) && 0 <= first && first <= last && last < 4096)) {
    throw moveRefused("first and last must be slots (0–4095), first ≤ last");
  }
  const owner = spread(stored.ranges);
  const from = owner[first]!;
  if (owner.slice(first, last + 1).some((shard) => shard !== from)) {
    throw moveRefused(`slots ${first}–${last} are not all in one shard: move each shard's part on its own`);
  }
  if (from === to) throw moveRefused(`slots ${first}–${last} are in ${to} already`);
  slotMapOf(scope.names, stored);
  return swap(home(scope), stored, {
    ...stored,
    version: stored.version + 1,
    moving: { first, last, from, to, since: scope.now, copied: false },
  });
}

export interface StepResult {
  map: StoredSlotMap;
  /** Where the next call goes on (null: this step is done). */
  cursor: CopyCursor | null;
  /** Milliseconds to wait before the step may run (the fence still settling). */
  waitMs?: number;
  rows?: SweepResult["rows"];
}

/** The copy goes in two phases: the target's stale rows of the range removed, then the source's copied. */
export type CopyCursor = SweepCursor & { phase: "clear" | "copy" };

/** Statements a call runs at most (a Worker invocation may run 1,000 D1 queries). */
const BUDGET = 400;

/** Step 3: a page of the copy, once `graceMs` has passed since the fence. */
export async function copy(
  scope: MoveScope,
  { graceMs, cursor }: { graceMs: number; cursor: CopyCursor | null },
): Promise<StepResult> {
  const map = await currentMap(scope);
  const moving = notRekey(map.moving);
  if (!moving) throw moveRefused("no slots are fenced: fence a range first");
  // Shorter than an isolate keeps its map, some request could still route the range to the source.
  const wait = moving.since + Math.max(graceMs, 2 * MAP_TTL_MS) - scope.now;
  if (wait > 0) return { map, cursor, waitMs: wait };
  const [source, target] = [binding(scope, moving.from), binding(scope, moving.to)];
  const at = cursor ?? { phase: "clear", table: 0, after: 0 };
  const step =
    at.phase === "clear"
      ? await sweep("remove", target, null, moving, at, BUDGET)
      : await sweep("copy", source, target, moving, at, BUDGET);
  if (step.next) return { map, cursor: { ...step.next, phase: at.phase }, rows: step.rows };
  if (at.phase === "clear") return { map, cursor: { phase: "copy", table: 0, after: 0 }, rows: step.rows };
  const done = await swap(home(scope), map, {
    ...map,
    version: map.version + 1,
    moving: { ...moving, copied: true },
  });
  return { map: done, cursor: null, rows: step.rows };
}

/** Step 4: the copied range belongs to its target from now on. */
export async function switchOver(scope: MoveScope): Promise<StoredSlotMap> {
  const map = await currentMap(scope);
  const moving = notRekey(map.moving);
  if (!moving?.copied) throw moveRefused("nothing is copied: fence and copy a range first");
  const owner = spread(map.ranges);
  owner.fill(moving.to, moving.first, moving.last + 1);
  return swap(home(scope), map, {
    version: map.version + 1,
    ranges: gather(owner),
    moving: null,
    leftover: { first: moving.first, last: moving.last, from: moving.from },
  });
}

/** Step 5: a page of the removal of the old copies from the source. */
export async function purge(
  scope: MoveScope,
  { cursor }: { cursor: SweepCursor | null },
): Promise<StepResult> {
  const map = await currentMap(scope);
  const leftover = map.leftover;
  if (!leftover) throw moveRefused("nothing is left to remove");
  const step = await sweep("remove", binding(scope, leftover.from), null, leftover, cursor, BUDGET);
  if (step.next) return { map, cursor: { ...step.next, phase: "clear" }, rows: step.rows };
  const done = await swap(home(scope), map, { ...map, version: map.version + 1, leftover: null });
  return { map: done, cursor: null, rows: step.rows };
}

/** Instead of the switch: the target's copies removed (a page per call), then the fence lifted. */
export async function abort(
  scope: MoveScope,
  { cursor }: { cursor: SweepCursor | null },
): Promise<StepResult> {
  const map = await currentMap(scope);
  const moving = notRekey(map.moving);
  if (!moving) throw moveRefused("no slots are fenced");
  const step = await sweep("remove", binding(scope, moving.to), null, moving, cursor, BUDGET);
  if (step.next) return { map, cursor: { ...step.next, phase: "clear" }, rows: step.rows };
  const done = await swap(home(scope), map, { ...map, version: map.version + 1, moving: null });
  return { map: done, cursor: null, rows: step.rows };
}
