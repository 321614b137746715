// The sharding core (src/db/shards.ts, routed-ids.ts, directory.ts) against the suite's two real D1 shards.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  CLAIM_WINDOW_MS,
  claim,
  ownerOf,
  releaseEntries,
  releaseUser,
  shardOfEntry,
  slotOfKey,
} from "../../src/db/directory";
import { idForUser, routedUuid, shardOfRouted, slotOfRouted } from "../../src/db/routed-ids";
import { eachShard, SLOTS, shardIndexOfSlot, shardsOf, slotOfUser, trackShards } from "../../src/db/shards";
import { sha256Hex } from "../../src/lib/crypto";
import { directoryKeysOf, testShards } from "../support/shards";

const uuid = () => crypto.randomUUID();
const email = () => `core-${uuid()}@example.com`;

/** A user id whose shard is `index` (ids are random: draw until one lands there). */
function userIn(index: number): string {
  for (;;) {
    const id = uuid();
    if (testShards().indexOfUser(id) === index) return id;
  }
}

/** A user row in its shard, holding `address`. */
async function insertUser(id: string, address: string | null) {
  await testShards()
    .d1OfUser(id)
    .prepare(
      "INSERT INTO users (id, created_at, updated_at, locale, email, default_role, roles, metadata) VALUES (?, 0, 0, 'en', ?, 'user', '[\"user\"]', '{}')",
    )
    .bind(id, address)
    .run();
}

describe("slots and shards", () => {
  it("a user's slot is the first 12 bits of SHA-256 of its id, whatever its case", async () => {
    const id = uuid();
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(id)));
    expect(slotOfUser(id)).toBe((digest[0]! << 4) | (digest[1]! >> 4));
    expect(slotOfUser(id.toUpperCase())).toBe(slotOfUser(id));
  });

  it("slots split into contiguous, equal ranges", () => {
    expect(shardIndexOfSlot(0, 2)).toBe(0);
    expect(shardIndexOfSlot(2047, 2)).toBe(0);
    expect(shardIndexOfSlot(2048, 2)).toBe(1);
    expect(shardIndexOfSlot(SLOTS - 1, 2)).toBe(1);
    const counts = new Array(16).fill(0);
    for (let slot = 0; slot < SLOTS; slot++) counts[shardIndexOfSlot(slot, 16)]++;
    expect(new Set(counts)).toEqual(new Set([256]));
  });

  it("one shard: everything is the home database", () => {
    const one = shardsOf({ DB: env.DB }, ["DB"]);
    expect(one.count).toBe(1);
    expect(one.ofUser(uuid())).toBe(one.home);
    expect(shardOfRouted(one, uuid())).toBe(one.home);
  });

  it("a list naming a binding the Worker lacks is a configuration error", () => {
    expect(() => shardsOf({ DB: env.DB }, ["DB", "DB_9"])).toThrow(/DB_9/);
  });

  it("a request's view marks the shards it reached, and all of them when it walks them", async () => {
    const view = trackShards(testShards());
    expect(view.touched()).toEqual([0]);
    view.shards.ofUser(userIn(1));
    expect([...view.touched()].sort()).toEqual([0, 1]);
    const fresh = trackShards(testShards());
    await eachShard(fresh.shards, async () => {});
    expect([...fresh.touched()].sort()).toEqual([0, 1]);
  });
});

describe("routed ids", () => {
  it("carry the slot in their first three hex digits, as a version-8 UUID with 110 random bits", () => {
    for (const slot of [0, 1, 255, 2048, SLOTS - 1]) {
      const id = routedUuid(slot);
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(slotOfRouted(id)).toBe(slot);
    }
    const ids = new Set(Array.from({ length: 1000 }, () => routedUuid(7)));
    expect(ids.size).toBe(1000);
  });

  it("an id minted for a user routes to the user's shard; a random v4 id does not say", () => {
    const shards = testShards();
    for (const index of [0, 1]) {
      const user = userIn(index);
      expect(shardOfRouted(shards, idForUser(user))).toBe(shards.ofUser(user));
    }
    expect(slotOfRouted(uuid())).toBeUndefined();
    expect(shardOfRouted(shards, uuid())).toBeUndefined();
  });
});

describe("the directory", () => {
  const now = Date.now();

  it("names the shard of an email's owner; nobody's email is nowhere", async () => {
    const shards = testShards();
    const owner = userIn(1);
    const address = email();
    expect(await claim(shards, owner, [{ kind: "email", value: address }], now)).toBeNull();
    expect(await shardOfEntry(shards, { kind: "email", value: address })).toBe(shards.ofUser(owner));
    expect(await shardOfEntry(shards, { kind: "email", value: email() })).toBeUndefined();
  });

  // Threat: one email held by two accounts in two shards (the shard's unique index sees only its own rows), so a
  // sign-in or a reset reaches the wrong account.
  it("a key another user holds is refused, and nothing this call claimed stays claimed", async () => {
    const shards = testShards();
    const [first, second] = [userIn(0), userIn(1)];
    const [address, phone] = [email(), `+1555${Math.floor(Math.random() * 1e7)}`];
    await insertUser(first, address);
    expect(await claim(shards, first, [{ kind: "email", value: address }], now)).toBeNull();
    const refused = await claim(
      shards,
      second,
      [
        { kind: "phone", value: phone },
        { kind: "email", value: address },
      ],
      now,
    );
    expect(refused).toEqual({ kind: "email", value: address });
    expect(await ownerOf(shards, { kind: "phone", value: phone })).toBeUndefined();
    expect(await ownerOf(shards, { kind: "email", value: address })).toBe(first);
  });

  it("two users claiming one key at once: exactly one gets it", async () => {
    const shards = testShards();
    const address = email();
    const users = Array.from({ length: 8 }, (_, i) => userIn(i % 2));
    const outcomes = await Promise.all(
      users.map((user) => claim(shards, user, [{ kind: "email", value: address }], now)),
    );
    expect(outcomes.filter((outcome) => outcome === null)).toHaveLength(1);
    expect(users).toContain(await ownerOf(shards, { kind: "email", value: address }));
  });

  it("a young claim whose user never arrived is not taken over: that user may be being written right now", async () => {
    const shards = testShards();
    const address = email();
    expect(await claim(shards, userIn(0), [{ kind: "email", value: address }], now - 1000)).toBeNull();
    expect(await claim(shards, userIn(1), [{ kind: "email", value: address }], now)).toEqual({
      kind: "email",
      value: address,
    });
  });

  it("an old claim whose user never arrived, or moved on to another address, is taken over", async () => {
    const shards = testShards();
    const [ghost, movedOn, taker] = [userIn(0), userIn(1), userIn(0)];
    const [lost, changed] = [email(), email()];
    const old = now - CLAIM_WINDOW_MS - 1;
    await claim(shards, ghost, [{ kind: "email", value: lost }], old);
    await insertUser(movedOn, email());
    await claim(shards, movedOn, [{ kind: "email", value: changed }], old);
    const both = [
      { kind: "email" as const, value: lost },
      { kind: "email" as const, value: changed },
    ];
    expect(await claim(shards, taker, both, now)).toBeNull();
    expect(await ownerOf(shards, both[0]!)).toBe(taker);
    expect(await ownerOf(shards, both[1]!)).toBe(taker);
  });

  it("an old claim whose user still holds the address is never taken over", async () => {
    const shards = testShards();
    const [holder, taker] = [userIn(1), userIn(0)];
    const address = email();
    await insertUser(holder, address);
    await claim(shards, holder, [{ kind: "email", value: address }], now - CLAIM_WINDOW_MS - 1);
    expect(await claim(shards, taker, [{ kind: "email", value: address }], now)).not.toBeNull();
    expect(await ownerOf(shards, { kind: "email", value: address })).toBe(holder);
  });

  it("a refusal gives back a key the same call had taken over", async () => {
    const shards = testShards();
    const [ghost, holder, taker] = [userIn(0), userIn(1), userIn(0)];
    const [stale, held] = [email(), email()];
    await claim(shards, ghost, [{ kind: "email", value: stale }], now - CLAIM_WINDOW_MS - 1);
    await insertUser(holder, held);
    await claim(shards, holder, [{ kind: "email", value: held }], now);
    const refused = await claim(
      shards,
      taker,
      [
        { kind: "email", value: stale },
        { kind: "email", value: held },
      ],
      now,
    );
    expect(refused).toEqual({ kind: "email", value: held });
    expect(await ownerOf(shards, { kind: "email", value: stale })).not.toBe(taker);
  });

  // D1 binds at most 100 values a statement (local SQLite allows more, so this guards the slicing itself).
  it("claims and releases more keys than one statement can bind", async () => {
    const shards = testShards();
    const user = userIn(1);
    const entries = Array.from({ length: 120 }, () => ({ kind: "pat" as const, value: uuid() }));
    expect(await claim(shards, user, entries, now)).toBeNull();
    // Spread over both shards by the keys' slots (120 random keys: both get some).
    expect(await directoryKeysOf(user)).toBe(120);
    await releaseEntries(shards, user, entries);
    expect(await directoryKeysOf(user)).toBe(0);
  });

  // Threat: a deleted user's files (kept, as the admin API documents) becoming unreachable by id, or their ids free
  // for someone else to take.
  it("a removed user's keys go, but not their files': those stay found", async () => {
    const shards = testShards();
    const user = userIn(1);
    const fileId = uuid();
    const entries = [
      { kind: "email" as const, value: email() },
      { kind: "file" as const, value: fileId },
    ];
    expect(await claim(shards, user, entries, now)).toBeNull();
    await releaseUser(shards, user);
    expect(await ownerOf(shards, entries[0]!)).toBeUndefined();
    expect(await ownerOf(shards, entries[1]!)).toBe(user);
  });

  // Threat: one database holding a key per user (the directory at home) is the size ceiling issue 48 lifts: a key
  // must live in the shard of its own slot, so the directory grows with the shards.
  it("is sharded by key: each key in the shard of its slot only, found from there", async () => {
    const shards = testShards();
    const user = userIn(0);
    const entries = Array.from({ length: 24 }, () => ({ kind: "email" as const, value: email() }));
    expect(await claim(shards, user, entries, now)).toBeNull();
    const where = await Promise.all(
      entries.map(async (entry) => {
        const key = await sha256Hex(`${entry.kind}:${entry.value}`);
        const counts = await Promise.all(
          shards.allD1.map(
            async (d1) =>
              (await d1
                .prepare("SELECT count(*) AS n FROM directory WHERE key = ?")
                .bind(key)
                .first<{ n: number }>())!.n,
          ),
        );
        return { counts, expected: shardIndexOfSlot(slotOfKey(key), shards.count) };
      }),
    );
    for (const { counts, expected } of where)
      expect(counts).toEqual(counts.map((_, i) => (i === expected ? 1 : 0)));
    // 24 random keys: both shards hold some (a 2^-23 chance of a false failure).
    expect(new Set(where.map((w) => w.expected)).size).toBe(2);
    for (const entry of entries) expect(await ownerOf(shards, entry)).toBe(user);
    await releaseEntries(shards, user, entries);
    expect(await directoryKeysOf(user)).toBe(0);
  });

  // Threat: a claim whose keys span two shards half-written when one shard fails, leaving young keys that refuse
  // the user's own retry.
  it("one directory shard failing its batch: the claim throws and the other shard's keys go back", async () => {
    const failing = new Proxy(env.DB_1 as D1Database, {
      get(target, property) {
        if (property === "batch")
          return () => Promise.reject(new Error("D1_ERROR: Network connection lost."));
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const faulty = shardsOf({ DB: env.DB, DB_1: failing }, ["DB", "DB_1"]);
    const user = userIn(0);
    const entries = Array.from({ length: 24 }, () => ({ kind: "email" as const, value: email() }));
    await expect(claim(faulty, user, entries, now)).rejects.toThrow(/Network connection lost/);
    expect(await directoryKeysOf(user)).toBe(0);
    expect(await claim(testShards(), user, entries, now)).toBeNull();
    expect(await directoryKeysOf(user)).toBe(24);
  });

  it("releasing gives back only what the user holds", async () => {
    const shards = testShards();
    const [holder, other] = [userIn(0), userIn(1)];
    const address = email();
    await claim(shards, holder, [{ kind: "email", value: address }], now);
    await releaseEntries(shards, other, [{ kind: "email", value: address }]);
    expect(await ownerOf(shards, { kind: "email", value: address })).toBe(holder);
  });

  it("does nothing with one shard", async () => {
    const one = shardsOf({ DB: env.DB }, ["DB"]);
    const address = email();
    expect(await claim(one, uuid(), [{ kind: "email", value: address }], now)).toBeNull();
    expect(await ownerOf(testShards(), { kind: "email", value: address })).toBeUndefined();
    expect(await shardOfEntry(one, { kind: "email", value: address })).toBe(one.home);
  });
});
