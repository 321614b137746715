// Rows as the suite's two shards hold them (vitest.config.ts `TEST_SHARDS`): a user's rows, and everything keyed by
// the user, are in the database of the user's slot (src/db/shards.ts). Tests that read or change rows directly go
// through here rather than `env.DB`, which holds only half of the users.
import { env } from "cloudflare:test";
import type { Db } from "../../src/db/client";
import { slotOfRouted } from "../../src/db/routed-ids";
import { type Shards, shardsOf } from "../../src/db/shards";

/** The suite's shards, as the Worker builds them from the same bindings. */
export function testShards(bindings: object = env): Shards {
  return shardsOf(bindings, String((bindings as Record<string, unknown>).AUTH_D1_SHARDS ?? "DB").split(","));
}

/** The D1 binding that holds `userId`'s rows. */
export const userD1 = (userId: string): D1Database => testShards().d1OfUser(userId);

/** Drizzle over the shard of `userId`. */
export const userDb = (userId: string): Db => testShards().ofUser(userId);

/** The D1 binding an id minted with a slot (a session, a grant, a ticket, a file) names. */
export function routedD1(id: string): D1Database {
  const slot = slotOfRouted(id);
  if (slot === undefined) throw new Error(`${id} is not a routed id`);
  return testShards().d1OfSlot(slot);
}

/** Every shard's D1 binding, home first. */
export const allD1 = (): readonly D1Database[] => testShards().allD1;

/** The first row any shard returns for `sql` with `values` (a lookup by email, by a token's hash). */
export async function firstInAnyShard<T>(sql: string, ...values: unknown[]): Promise<T | null> {
  for (const d1 of allD1()) {
    const row = await d1
      .prepare(sql)
      .bind(...values)
      .first<T>();
    if (row) return row;
  }
  return null;
}

/** Every shard's rows for `sql`, concatenated (a count per shard is summed by the caller). */
export async function allInShards<T>(sql: string, ...values: unknown[]): Promise<T[]> {
  const parts = await Promise.all(
    allD1().map((d1) =>
      d1
        .prepare(sql)
        .bind(...values)
        .all<T>(),
    ),
  );
  return parts.flatMap((part) => part.results);
}

/** The user id of an email, in whichever shard holds it. */
export async function userIdByEmail(email: string): Promise<string | undefined> {
  const row = await firstInAnyShard<{ id: string }>(
    "SELECT id FROM users WHERE email = ?",
    email.toLowerCase(),
  );
  return row?.id;
}

/** How many directory keys `userId` holds, over every shard (the directory is sharded by key, src/db/directory.ts). */
export async function directoryKeysOf(userId: string): Promise<number> {
  const rows = await allInShards<{ n: number }>(
    "SELECT count(*) AS n FROM directory WHERE user_id = ?",
    userId,
  );
  return rows.reduce((sum, row) => sum + row.n, 0);
}

/** Every directory key, over every shard. */
export async function directorySize(): Promise<number> {
  const rows = await allInShards<{ n: number }>("SELECT count(*) AS n FROM directory");
  return rows.reduce((sum, row) => sum + row.n, 0);
}

/** The owner of a directory key (SHA-256 of `<kind>:<value>`, hex), read in the shard of the key's slot. */
export async function directoryOwner(key: string): Promise<string | null> {
  const row = await testShards()
    .d1OfSlot(Number.parseInt(key.slice(0, 3), 16))
    .prepare("SELECT user_id FROM directory WHERE key = ?")
    .bind(key)
    .first<{ user_id: string }>();
  return row?.user_id ?? null;
}
