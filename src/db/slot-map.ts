import { ConfigError, UnavailableError } from "../errors";

/**
 * Which shard holds each of the 4,096 slots (docs/scaling.md, "Growing the shard list"), and the one range of slots
 * being moved, if any. Without a stored map the slots are split into equal contiguous ranges over `AUTH_D1_SHARDS`
 * (src/db/shards.ts); once slots move, the map is a row of the home database's `service_settings`, written only by
 * the slot mover (slot-moves.ts), and every binding it names must be in the list.
 *
 * Every isolate keeps the map it read for `MAP_TTL_MS`: a request routes with the map its isolate held when it began,
 * so a change reaches every request that starts more than `MAP_TTL_MS` after it was written. The mover waits that
 * long, plus the longest request, between fencing a range and copying it (`graceMs`). With one shard nothing here
 * is read: the map is only loaded when the list names several bindings.
 */

export const SLOT_MAP_KEY = "shards.slot-map";
const SLOTS = 4096;
/**
 * The directory's old layout (migration 0042): present when the deployment ran several shards before the directory
 * was sharded by key. `"home"`: every key is still in the home database; a number N: the keys of slots below N are
 * in their slots' shards (directory-rekey.ts moved them), the others still at home. Read with the map, in one query.
 */
export const DIRECTORY_LAYOUT_KEY = "directory.layout";

/** The first slot whose keys are still at home, from the marker's stored value (absent: none, 4096). */
export const homeFromOf = (value: string | undefined): number => {
  if (value === undefined || buildOf(value)) return SLOTS;
  const parsed = JSON.parse(value) as unknown;
  return typeof parsed === "number" ? parsed : 0;
};

/**
 * The same marker while the directory of a deployment that ran one shard is being built (directory-build.ts):
 * `{"build": since}`, `since` the time every isolate was asked to write keys for every change (0: not yet begun).
 * Every slot is in the home shard then, and lookups read it directly, as with one shard.
 */
export function buildOf(value: string | undefined): { since: number } | undefined {
  if (value === undefined) return undefined;
  const parsed = JSON.parse(value) as { build?: unknown } | null;
  return parsed !== null && typeof parsed === "object" && typeof parsed.build === "number"
    ? { since: parsed.build }
    : undefined;
}
export const MAP_TTL_MS = 1000;
/**
 * The map's read (with the directory's layout marker), its keys written into the statement: a statement of its own,
 * which the suite's counts of a request's reads and round trips leave out (test/support/counting-bindings.ts,
 * bench/round-trips.ts), since it is made once per isolate and second, not once per request.
 */
export const SLOT_MAP_READ = `SELECT key, value FROM service_settings WHERE key IN ('${SLOT_MAP_KEY}', '${DIRECTORY_LAYOUT_KEY}')`;

/** A range of slots, both ends included, and the binding that holds it. */
export type SlotRange = readonly [first: number, last: number, shard: string];

/** The row as stored (JSON): the whole map as ranges, and the range in flight with its target. */
export interface StoredSlotMap {
  version: number;
  ranges: SlotRange[];
  /**
   * Slots whose requests wait (fenced) while their rows are copied: from where, to where, since when, and whether
   * the copy is complete (the switch needs it).
   */
  moving: {
    first: number;
    last: number;
    from: string;
    to: string;
    since: number;
    copied: boolean;
    /** A re-key of the directory's old layout (directory-rekey.ts), not a move: `from` is `to`. */
    rekey?: boolean;
  } | null;
  /** Slots switched to another shard whose old rows are still in `from`, to be removed (slot-moves.ts `purge`). */
  leftover: { first: number; last: number; from: string } | null;
}

export interface SlotMap {
  /** 0: the default split (no row). */
  readonly version: number;
  /** The index in the list of the shard of each slot. */
  readonly owner: Uint16Array;
  /** The range fenced for a move, or null. */
  readonly moving: StoredSlotMap["moving"];
  /**
   * The directory keys of slots from this one on are in the home database, as before the directory was sharded by
   * key (the marker of migration 0042; 4,096 without it): directory.ts reads and writes them there, not in their
   * slots' shards, unless the slot is fenced for their re-key.
   */
  readonly directoryHomeFrom: number;
  /**
   * The directory is being built (directory-build.ts): every change writes its keys, but lookups do not trust it yet
   * and read the home shard, which holds every slot until the build is done.
   */
  readonly directoryBuilding?: boolean;
  /**
   * The map could not be read and this isolate never read one: the default split, a guess, which nothing routes by.
   * Asking for a slot's shard is a 503 (shards.ts: a moved user's rows would be looked for, or written, where they
   * are not), and so is the directory (directory.ts: a claim in a guessed shard could let two users hold one email);
   * what needs no user's shard (a page, the home database's own tables) answers.
   */
  readonly guessed?: boolean;
}

/** The default: equal contiguous ranges over the list (a power of two splits evenly). */
export function defaultRanges(names: readonly string[]): SlotRange[] {
  const ranges: SlotRange[] = [];
  for (let index = 0; index < names.length; index++) {
    const first = Math.ceil((index * SLOTS) / names.length);
    const last = Math.ceil(((index + 1) * SLOTS) / names.length) - 1;
    if (last >= first) ranges.push([first, last, names[index]!]);
  }
  return ranges;
}

/** The routing table of a stored map (or of the default split), against the configured list. */
export function slotMapOf(
  names: readonly string[],
  stored: StoredSlotMap | null,
  directoryHomeFrom = SLOTS,
  directoryBuilding = false,
): SlotMap {
  const owner = new Uint16Array(SLOTS);
  const covered = new Uint8Array(SLOTS);
  for (const [first, last, shard] of stored?.ranges ?? defaultRanges(names)) {
    const index = names.indexOf(shard);
    if (index < 0) {
      throw new ConfigError(
        `the slot map puts slots ${first}-${last} in ${shard}, which AUTH_D1_SHARDS does not name`,
      );
    }
    owner.fill(index, first, last + 1);
    covered.fill(1, first, last + 1);
  }
  if (covered.includes(0)) throw new ConfigError("the stored slot map leaves slots without a shard");
  if (stored?.moving && names.indexOf(stored.moving.to) < 0) {
    throw new ConfigError(`slots are moving to ${stored.moving.to}, which AUTH_D1_SHARDS does not name`);
  }
  return {
    version: stored?.version ?? 0,
    owner,
    moving: stored?.moving ?? null,
    directoryHomeFrom,
    directoryBuilding,
  };
}

/** Whether `slot` is fenced: its rows are being copied, and a request that needs them waits (slot-fence.ts). */
export const isFenced = (map: SlotMap, slot: number) =>
  map.moving !== null && slot >= map.moving.first && slot <= map.moving.last;

/**
 * A request that waited longer than `WAIT_MS` for a move (slot-wait.ts), or asked which shard holds a moving slot
 * (a list that groups users by shard): the 503 a client retries.
 */
export class SlotMovingError extends UnavailableError {
  constructor(readonly slot: number) {
    super(`slot ${slot} is moving to another shard`, 1);
  }
}

interface Cached {
  map: SlotMap;
  names: string;
  loadedAt: number;
}

/**
 * Per home binding: the map this isolate read last. Concurrent requests with a stale map each read it themselves: a
 * read started by one request is that request's I/O, which Workers forbid another request to wait on (its promise
 * may never resume in the other request's context).
 */
const cache = new WeakMap<object, Cached>();

/** The map stored in `home`, or null (the default split). */
export async function readStoredMap(home: D1Database): Promise<StoredSlotMap | null> {
  return (await readRouting(home)).stored;
}

/** The stored map and whether the directory's old layout marker is there: one query. */
export async function readRouting(
  home: D1Database,
): Promise<{ stored: StoredSlotMap | null; directoryHomeFrom: number; directoryBuilding: boolean }> {
  const { results } = await home.prepare(SLOT_MAP_READ).all<{ key: string; value: string }>();
  const map = results.find((row) => row.key === SLOT_MAP_KEY);
  const layout = results.find((row) => row.key === DIRECTORY_LAYOUT_KEY)?.value;
  return {
    stored: map ? (JSON.parse(map.value) as StoredSlotMap) : null,
    directoryHomeFrom: homeFromOf(layout),
    directoryBuilding: buildOf(layout) !== undefined,
  };
}

/**
 * The map for the Worker's list, read from the home database at most once per `MAP_TTL_MS` per isolate (`fresh`:
 * now, as a request that waits for a move does). Nothing is read with one shard. A read that fails leaves the last
 * map in use, logged: the request goes on as it would have a moment earlier, and the next request reads again. If
 * this isolate never read one, the request fails with a 503 rather than guess.
 */
export async function loadSlotMap(
  env: object,
  names: readonly string[],
  { fresh = false, now = Date.now() }: { fresh?: boolean; now?: number } = {},
): Promise<SlotMap | undefined> {
  if (names.length === 1) return undefined;
  const home = (env as Record<string, unknown>)[names[0]!] as D1Database | undefined;
  if (!home) return undefined;
  const key = names.join(",");
  const cached = cache.get(home);
  if (!fresh && cached && cached.names === key && now - cached.loadedAt < MAP_TTL_MS) return cached.map;
  try {
    const { stored, directoryHomeFrom, directoryBuilding } = await readRouting(home);
    // The same version: the same map object, so the shards built on it are kept (shards.ts caches by map).
    const latest = cache.get(home);
    const same =
      latest?.names === key &&
      latest.map.version === (stored?.version ?? 0) &&
      latest.map.directoryHomeFrom === directoryHomeFrom &&
      latest.map.directoryBuilding === directoryBuilding;
    const map = same ? latest!.map : slotMapOf(names, stored, directoryHomeFrom, directoryBuilding);
    cache.set(home, { map, names: key, loadedAt: Date.now() });
    return map;
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    console.error(JSON.stringify({ level: "error", what: "slot map", detail: String(error) }));
    if (cached?.names === key) return cached.map;
    // Never read in this isolate: the default split, marked as a guess. A page and a health check still answer (a
    // fault test: the sign-in page renders with D1 down); whatever asks for a slot's shard is refused (503).
    return { ...slotMapOf(names, null), guessed: true };
  }
}

/** How long a query waits for a move at most (a range's copy takes far less; past it, the 503 stands). */
const WAIT_MS = 20_000;
const POLL_MS = 100;

/** The map once `slot` is no longer fenced, read afresh every `POLL_MS`; `SlotMovingError` past `WAIT_MS`. */
export async function mapAfterMove(env: object, names: readonly string[], slot: number): Promise<SlotMap> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const map = await loadSlotMap(env, names, { fresh: true });
    if (!map || !isFenced(map, slot)) return map ?? slotMapOf(names, null);
    if (Date.now() > deadline) throw new SlotMovingError(slot);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The map this isolate holds for `env`'s home binding, without reading (shards.ts builds routing from it). */
export function heldSlotMap(env: object, names: readonly string[]): SlotMap | undefined {
  if (names.length === 1) return undefined;
  const home = (env as Record<string, unknown>)[names[0]!];
  const cached = home ? cache.get(home as object) : undefined;
  return cached && cached.names === names.join(",") ? cached.map : undefined;
}
