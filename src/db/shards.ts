import { sha256 } from "@oslojs/crypto/sha2";
import { ConfigError } from "../errors";
import { createDb, type Db } from "./client";

/**
 * Users spread over several D1 databases (docs/scaling.md, "Past one D1 database"). A user, and every row keyed by
 * the user (sessions, keys, tokens, tickets, grants, files they uploaded, their events and audit events), lives in
 * one shard, chosen by the user's **slot**: the first 12 bits of SHA-256 of the user id, one of 4,096, fixed forever
 * (it works for ids the service did not choose, such as Nhost's). Slots map to the bindings of `AUTH_D1_SHARDS` in
 * contiguous, equal ranges. The first binding, `DB`, is the **home** database: it also holds what belongs to no user
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

function build(env: Record<string, unknown>, names: readonly string[]): Shards {
  const allD1 = names.map((name) => {
    const binding = env[name] as D1Database | undefined;
    if (!binding || typeof (binding as D1Database).prepare !== "function") {
      throw new ConfigError(`AUTH_D1_SHARDS names ${name}, which is not a D1 binding of this Worker`);
    }
    return binding;
  });
  const all = allD1.map((d1) => createDb(d1));
  const count = all.length;
  const indexOfSlot = (slot: number) => shardIndexOfSlot(slot, count);
  const indexOfUser = (userId: string) => (count === 1 ? 0 : indexOfSlot(slotOfUser(userId)));
  return {
    home: all[0]!,
    homeD1: allD1[0]!,
    count,
    all,
    allD1,
    indexOfUser,
    ofUser: (userId) => all[indexOfUser(userId)]!,
    d1OfUser: (userId) => allD1[indexOfUser(userId)]!,
    ofSlot: (slot) => all[indexOfSlot(slot)]!,
    d1OfSlot: (slot) => allD1[indexOfSlot(slot)]!,
  };
}

/**
 * Built once per env object and list (Workers reuse the env object across an isolate's requests; the Drizzle
 * instances behind are cached per binding by createDb). Tests that wrap a binding pass a new env, hence new shards.
 */
const cache = new WeakMap<object, { names: string; shards: Shards }>();

export function shardsOf(env: object, names: readonly string[]): Shards {
  const key = names.join(",");
  const cached = cache.get(env);
  if (cached && cached.names === key) return cached.shards;
  const shards = build(env as Record<string, unknown>, names);
  cache.set(env, { names: key, shards });
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
 * (src/http/context.ts), not every shard's.
 */
export function trackShards(shards: Shards): { shards: Shards; touched: () => readonly number[] } {
  if (shards.count === 1) return { shards, touched: () => [0] };
  const used = new Set<number>([0]);
  const mark = (index: number) => {
    used.add(index);
    return index;
  };
  const markAll = () => {
    for (let index = 0; index < shards.count; index++) used.add(index);
  };
  const slotIndex = (slot: number) => mark(shardIndexOfSlot(slot, shards.count));
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
    indexOfUser: (userId) => mark(shards.indexOfUser(userId)),
    ofUser: (userId) => shards.all[mark(shards.indexOfUser(userId))]!,
    d1OfUser: (userId) => shards.allD1[mark(shards.indexOfUser(userId))]!,
    ofSlot: (slot) => shards.all[slotIndex(slot)]!,
    d1OfSlot: (slot) => shards.allD1[slotIndex(slot)]!,
  };
  return { shards: view, touched: () => [...used] };
}
