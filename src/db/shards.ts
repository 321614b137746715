import { sha256 } from "@oslojs/crypto/sha2";
import { ConfigError, UnavailableError } from "../errors";
import { createDb, type Db } from "./client";
import { heldSlotMap, isFenced, mapAfterMove, type SlotMap, SlotMovingError } from "./slot-map";
import { waitingD1 } from "./slot-wait";

/**
 * Users spread over several D1 databases (docs/scaling.md, "Past one D1 database"). A user, and every row keyed by
 * the user (sessions, keys, tokens, tickets, grants, files they uploaded, their events and audit events), lives in
 * one shard, chosen by the user's **slot**: the first 12 bits of SHA-256 of the user id, one of 4,096, fixed forever
 * (it works for ids the service did not choose, such as Nhost's). Slots map to the bindings of `AUTH_D1_SHARDS` in
 * contiguous, equal ranges, or as the stored slot map says once slots have moved (slot-map.ts, slot-moves.ts). The first binding, `DB`, is the **home** database: it also holds what belongs to no user
 * (buckets, OAuth2 clients, signing keys, webhooks, the console's sessions). The directory (directory.ts) is
 * sharded by its keys' slots over the same databases.
 *
 * One shard (the default) changes nothing: every slot maps to `DB` and the directory is not used.
 */

export const SLOTS = 4096;

export interface Shards {
  /** `DB`: the global tables, and the first shard. */
  readonly home: Db;
  readonly homeD1: D1Database;
  /** How many databases users are spread over (1: no sharding, no directory). */
  readonly count: number;
  /** Every shard, home first: for work that visits them all (lists, housekeeping, the outbox drain). */
  readonly all: readonly Db[];
  readonly allD1: readonly D1Database[];
  /** The shard of a user's rows. */
  ofUser(userId: string): Db;
  d1OfUser(userId: string): D1Database;
  /** The shard of a slot (an id minted with the slot inside it, routed-ids.ts). */
  ofSlot(slot: number): Db;
  d1OfSlot(slot: number): D1Database;
  /** The index in `all` of a user's shard. */
  indexOfUser(userId: string): number;
  /** The index in `all` of a slot's shard. */
  indexOfSlot(slot: number): number;
  /** The slot map routing follows (undefined with one shard). */
  readonly map: SlotMap | undefined;
}

const encoder = new TextEncoder();

/** A user's slot: the first 12 bits of SHA-256(user id). Synchronous (a few microseconds): routing costs no await. */
export function slotOfUser(userId: string): number {
  const digest = sha256(encoder.encode(userId.toLowerCase()));
  return (digest[0]! << 4) | (digest[1]! >> 4);
}

/** The index of the shard that holds `slot`, among `count`: contiguous ranges of equal size. */
export function shardIndexOfSlot(slot: number, count: number): number {
  return Math.floor((slot * count) / SLOTS);
}

/**
 * The slot map could not be read and this isolate never read one (slot-map.ts `guessed`): which shard holds a slot is
 * not known once slots have moved, and the default split would look for a moved user's rows where they are not (a
 * 401 or 404 the client acts on: it signs its user out) or write a row where nothing reads it. A 503 the client
 * retries; what needs no user's shard (the home database's own tables, a page) goes on.
 */
function refuseGuessedSlot(): never {
  throw new UnavailableError("the slot map could not be read");
}

function build(env: Record<string, unknown>, names: readonly string[], map: SlotMap | undefined): Shards {
  const allD1 = names.map((name) => {
    const binding = env[name] as D1Database | undefined;
    if (!binding || typeof (binding as D1Database).prepare !== "function") {
      throw new ConfigError(`AUTH_D1_SHARDS names ${name}, which is not a D1 binding of this Worker`);
    }
    return binding;
  });
  const all = allD1.map((d1) => createDb(d1));
  const count = all.length;
  const owner = map?.owner;
  const indexOfSlot = map?.guessed
    ? refuseGuessedSlot
    : owner
      ? (slot: number) => owner[slot]!
      : (slot: number) => shardIndexOfSlot(slot, count);
  const indexOfUser = (userId: string) => (count === 1 ? 0 : indexOfSlot(slotOfUser(userId)));
  return {
    home: all[0]!,
    homeD1: allD1[0]!,
    count,
    all,
    allD1,
    indexOfUser,
    indexOfSlot,
    map,
    ofUser: (userId) => all[indexOfUser(userId)]!,
    d1OfUser: (userId) => allD1[indexOfUser(userId)]!,
    ofSlot: (slot) => all[indexOfSlot(slot)]!,
    d1OfSlot: (slot) => allD1[indexOfSlot(slot)]!,
  };
}

/**
 * Built once per env object, list and slot map (Workers reuse the env object across an isolate's requests; the
 * Drizzle instances behind are cached per binding by createDb). Tests that wrap a binding pass a new env, hence new
 * shards. The slot map is the one this isolate last read (slot-map.ts `loadSlotMap`, which every entry point awaits
 * first with several shards); `map` overrides it (the slot mover's view of a map it is about to write).
 */
const cache = new WeakMap<object, { names: string; map: SlotMap | undefined; shards: Shards }>();

export function shardsOf(env: object, names: readonly string[], map = heldSlotMap(env, names)): Shards {
  const key = names.join(",");
  const cached = cache.get(env);
  if (cached && cached.names === key && cached.map === map) return cached.shards;
  const shards = build(env as Record<string, unknown>, names, map);
  cache.set(env, { names: key, map, shards });
  return shards;
}

/**
 * Runs `work` on every shard, at most `CONCURRENCY` at once (a Worker keeps six connections open at a time), and
 * returns the results in shard order. For the admin API's lists, the cron, the outbox drain: never a user's request.
 */
const CONCURRENCY = 6;

export async function eachShard<T>(
  shards: Shards,
  work: (db: Db, index: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = new Array(shards.count);
  let next = 0;
  const lane = async () => {
    while (next < shards.count) {
      const index = next++;
      results[index] = await work(shards.all[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, shards.count) }, lane));
  return results;
}

/**
 * A request's view of the shards that remembers which ones it reached (a user's, a slot's, or all of them through
 * `all`, as `eachShard` does): after the answer, the outbox of those shards (and of the home database) is drained
 * (src/http/context.ts), not every shard's. A slot being moved (slot-map.ts) is reached through a binding whose
 * queries wait for the switch and then run in the slot's new shard (slot-wait.ts); `env` and `names` are where the
 * map is read again meanwhile. Asking for a moving slot's index (a list grouping users by shard) is a 503.
 */
export function trackShards(
  shards: Shards,
  env?: object,
  names?: readonly string[],
): { shards: Shards; touched: () => readonly number[] } {
  if (shards.count === 1) return { shards, touched: () => [0] };
  const used = new Set<number>([0]);
  const mark = (index: number) => {
    used.add(index);
    return index;
  };
  const markAll = () => {
    for (let index = 0; index < shards.count; index++) used.add(index);
  };
  const map = shards.map;
  const fenced = (slot: number) => map !== undefined && isFenced(map, slot);
  const slotIndex = (slot: number) => {
    if (fenced(slot)) throw new SlotMovingError(slot);
    return mark(shards.indexOfSlot(slot));
  };
  const userIndex = (userId: string) => slotIndex(slotOfUser(userId));
  // One waiting binding per moving slot the request reaches: its queries run once the slot has its new shard.
  const waiting = new Map<number, D1Database>();
  const d1OfSlot = (slot: number): D1Database => {
    if (!fenced(slot)) return shards.allD1[mark(shards.indexOfSlot(slot))]!;
    if (!env || !names) throw new SlotMovingError(slot);
    let d1 = waiting.get(slot);
    if (!d1) {
      d1 = waitingD1(async () => {
        const after = await mapAfterMove(env, names, slot);
        return shards.allD1[mark(after.owner[slot]!)]!;
      });
      waiting.set(slot, d1);
    }
    return d1;
  };
  const ofSlot = (slot: number): Db =>
    fenced(slot) ? createDb(d1OfSlot(slot)) : shards.all[mark(shards.indexOfSlot(slot))]!;
  const view: Shards = {
    home: shards.home,
    homeD1: shards.homeD1,
    count: shards.count,
    get all() {
      markAll();
      return shards.all;
    },
    get allD1() {
      markAll();
      return shards.allD1;
    },
    indexOfUser: userIndex,
    indexOfSlot: slotIndex,
    map,
    ofUser: (userId) => ofSlot(slotOfUser(userId)),
    d1OfUser: (userId) => d1OfSlot(slotOfUser(userId)),
    ofSlot,
    d1OfSlot,
  };
  return { shards: view, touched: () => [...used] };
}
