import { and, eq, inArray, lt, notInArray, sql } from "drizzle-orm";
import { UnavailableError } from "../errors";
import { sha256Hex } from "../lib/crypto";
import type { Db } from "./client";
import { shardOfRouted } from "./routed-ids";
import { directory, files, userProviders, users } from "./schema";
import { eachShard, type Shards } from "./shards";
import { isFenced } from "./slot-map";

/**
 * The directory (docs/scaling.md, "Past one D1 database"): with several shards, which user owns an email, a phone
 * number, a provider identity, a personal access token, or a row imported under an id the service did not mint (a
 * Nhost ticket or refresh token, a file id a client chose). The directory is sharded as the users are: a key is
 * SHA-256 of what it names, so its first 12 bits are its **slot**, and the key lives in the shard that holds that
 * slot (no database holds a row per user; a slot move carries its keys with its users, scripts/move-slots.mjs). One
 * point read in the key's shard, then one in the owner's. With one shard nothing here reads or writes: the home
 * database is the only place to look. A deployment that grows from one shard builds its keys (directory-build.ts).
 *
 * Order of writes, so that two shards never both hold one email: claim the key first, write the shard, release the
 * claim if that write failed. A claim whose user never arrived (the request died in between) is taken over by the
 * next claimant once it is older than `CLAIM_WINDOW_MS` and its user does not hold the value in its shard; never
 * sooner, since the user of a young claim may be being written at that very moment. Stale keys are otherwise
 * harmless: a lookup through one reads the owner's shard, finds no row with the value, and answers "unknown".
 */

export type DirectoryKind =
  | "email"
  | "phone"
  | "provider"
  | "pat"
  | "refresh"
  | "ticket"
  | "session"
  | "file"
  /** An object's key in its bucket (`<bucket>/<path>`), owned as its file is (storage/object-paths.ts). */
  | "path";

export interface DirectoryEntry {
  kind: DirectoryKind;
  /**
   * Normalised as the shard stores it: a lower-cased email, E.164, `<provider>:<provider user id>`, a token's or a
   * ticket's hash (as its table stores it), an imported session's id, a file id.
   */
  value: string;
}

/** A provider identity's entry: `<provider>:<provider user id>`. */
export const identityEntry = (provider: string, providerUserId: string): DirectoryEntry => ({
  kind: "provider",
  value: `${provider}:${providerUserId}`,
});

/** Longer than any request that claims and then writes runs (a sign-up with its hooks and mail: well under 60 s). */
export const CLAIM_WINDOW_MS = 5 * 60_000;

const keyOf = (entry: DirectoryEntry) => sha256Hex(`${entry.kind}:${entry.value}`);

/** A key's slot: its first 12 bits (three hex digits), as a user id's slot is the first 12 bits of its hash. */
export const slotOfKey = (key: string): number => Number.parseInt(key.slice(0, 3), 16);

/**
 * The database that holds a key: the shard of its slot; the home database while the directory keeps its old layout
 * (a deployment that ran several shards before keys were sharded: migration 0042's marker, read with the slot map),
 * so that its existing keys are found and a claim cannot succeed beside one of them. A slot fenced for its keys'
 * re-key (directory-rekey.ts) waits, then goes to its shard, where the re-key put them.
 */
function dbOfKey(shards: Shards, key: string): Db {
  const slot = slotOfKey(key);
  const map = shards.map;
  // The slot map could not be read (slot-map.ts `guessed`): where a key lives is not known, and a claim in the
  // wrong shard would let two users hold one email. A 503 the client retries.
  if (map?.guessed) throw new UnavailableError("the slot map could not be read");
  return map && slot >= map.directoryHomeFrom && !isFenced(map, slot) ? shards.home : shards.ofSlot(slot);
}

/** Keys grouped by the shard that holds them (by index in `shards.all`), so each shard gets one statement or batch. */
function byShard(shards: Shards, keys: readonly string[]): Map<Db, string[]> {
  const groups = new Map<Db, string[]>();
  for (const key of keys) {
    const db = dbOfKey(shards, key);
    const group = groups.get(db);
    if (group) group.push(key);
    else groups.set(db, [key]);
  }
  return groups;
}

/**
 * Whether lookups ask the directory: with several shards, except while the directory of a deployment that ran one
 * shard is being built (directory-build.ts). Then every change writes its keys, but the existing users' keys may not
 * be there yet, and every slot is in the home shard: a lookup reads it directly, as with one shard.
 */
export const readsDirectory = (shards: Shards): boolean => shards.count > 1 && !shards.map?.directoryBuilding;

/** The owner of a key, or undefined. Only meaningful when `readsDirectory` (callers check it first). */
export async function ownerOf(shards: Shards, entry: DirectoryEntry): Promise<string | undefined> {
  const key = await keyOf(entry);
  const row = await dbOfKey(shards, key)
    .select({ userId: directory.userId })
    .from(directory)
    .where(eq(directory.key, key))
    .get();
  return row?.userId;
}

/**
 * The database in which to look for the row `entry` names: the home database with one shard (or while the
 * directory is built); the owner's shard with several; undefined when no one owns the key (so the row exists nowhere).
 */
export async function shardOfEntry(shards: Shards, entry: DirectoryEntry): Promise<Db | undefined> {
  if (!readsDirectory(shards)) return shards.home;
  const owner = await ownerOf(shards, entry);
  return owner === undefined ? undefined : shards.ofUser(owner);
}

/**
 * Whether `userId` still holds `entry` in its shard. A key whose owner is gone, or has moved on (an email changed
 * away whose release failed), is stale: the next claimant may take it over.
 */
async function stillHolds(shards: Shards, userId: string, entry: DirectoryEntry): Promise<boolean> {
  const db = shards.ofUser(userId);
  const one = { one: sql<number>`1` };
  switch (entry.kind) {
    case "email":
      return (
        (await db
          .select(one)
          .from(users)
          .where(and(eq(users.id, userId), eq(users.email, entry.value)))
          .get()) !== undefined
      );
    case "phone":
      return (
        (await db
          .select(one)
          .from(users)
          .where(and(eq(users.id, userId), eq(users.phoneNumber, entry.value)))
          .get()) !== undefined
      );
    case "provider": {
      const [provider, ...rest] = entry.value.split(":");
      return (
        (await db
          .select(one)
          .from(userProviders)
          .where(
            and(
              eq(userProviders.userId, userId),
              eq(userProviders.provider, provider!),
              eq(userProviders.providerUserId, rest.join(":")),
            ),
          )
          .get()) !== undefined
      );
    }
    case "file":
      return (await db.select(one).from(files).where(eq(files.id, entry.value)).get()) !== undefined;
    case "path": {
      // Bucket ids hold no `/`: the first one ends the bucket.
      const cut = entry.value.indexOf("/");
      const [bucketId, path] = [entry.value.slice(0, cut), entry.value.slice(cut + 1)];
      return (
        (await db
          .select(one)
          .from(files)
          .where(and(eq(files.bucketId, bucketId), eq(files.path, path)))
          .get()) !== undefined
      );
    }
    default:
      // Token hashes and imported tickets are random: two users never claim one. Their user being there is enough.
      return (await db.select(one).from(users).where(eq(users.id, userId)).get()) !== undefined;
  }
}

/** D1 binds at most 100 values a statement: rows of four values, keys of one, in slices under that. */
const ROWS_PER_INSERT = 24;
const KEYS_PER_SELECT = 90;

const slices = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

/**
 * Claims every entry for `userId` at `now`, all or none. Returns null when all are the user's now, or the first
 * entry another user holds (nothing claimed by this call stays claimed then). Entries the user already holds stay
 * theirs.
 */
export async function claim(
  shards: Shards,
  userId: string,
  entries: readonly DirectoryEntry[],
  now: number,
): Promise<DirectoryEntry | null> {
  if (shards.count === 1 || entries.length === 0) return null;
  const keys = await Promise.all(entries.map(keyOf));
  const kindOf = new Map(keys.map((key, index) => [key, entries[index]!.kind]));
  // One batch a shard, the shards at once. A batch is one transaction: the inserts and the reads that tell who
  // holds each key see the same state in that shard; across shards, a refusal gives back what the others claimed.
  const settled = await Promise.allSettled(
    [...byShard(shards, keys)].map(async ([db, part]) => {
      const results = await db.batch([
        ...slices(part, ROWS_PER_INSERT).map((rows) =>
          db
            .insert(directory)
            .values(rows.map((key) => ({ key, kind: kindOf.get(key)!, userId, claimedAt: now })))
            .onConflictDoNothing(),
        ),
        ...slices(part, KEYS_PER_SELECT).map((rows) =>
          db.select().from(directory).where(inArray(directory.key, rows)),
        ),
        // The user's own older claims made young again, after the reads (which tell this call's claims by `now`, so
        // what the user held before is never given back with them): a claim kept from a lost answer, met again by
        // its owner's next write, was taken over as stale by another user while that write ran.
        ...slices(part, KEYS_PER_SELECT).map((rows) =>
          db
            .update(directory)
            .set({ claimedAt: now })
            .where(
              and(inArray(directory.key, rows), eq(directory.userId, userId), lt(directory.claimedAt, now)),
            ),
        ),
      ] as unknown as Parameters<typeof db.batch>[0]);
      const reads = Math.ceil(part.length / KEYS_PER_SELECT);
      const inserts = Math.ceil(part.length / ROWS_PER_INSERT);
      return (results.slice(inserts, inserts + reads) as (typeof directory.$inferSelect)[][]).flat();
    }),
  );
  const rows = settled.flatMap((result) => (result.status === "fulfilled" ? result.value : []));
  const failed = settled.find((result) => result.status === "rejected");
  if (failed) {
    // One shard failed its batch (nothing of it stays: a batch is a transaction): the others' claims go back, so
    // a failed claim holds nothing, as one batch in one database held nothing.
    await release(
      shards,
      userId,
      rows.filter((row) => row.userId === userId && row.claimedAt === now).map((row) => row.key),
    );
    throw failed.reason;
  }
  const held = new Map(rows.map((row) => [row.key, row]));
  // What this call made the user's: given back if a later entry is refused.
  const mine = keys.filter((key) => held.get(key)?.userId === userId && held.get(key)?.claimedAt === now);
  for (const [index, key] of keys.entries()) {
    const row = held.get(key);
    if (!row || row.userId === userId) continue;
    const stale =
      row.claimedAt < now - CLAIM_WINDOW_MS && !(await stillHolds(shards, row.userId, entries[index]!));
    const db = dbOfKey(shards, key);
    const taken =
      stale &&
      (await db
        .update(directory)
        .set({ userId, claimedAt: now })
        .where(
          and(
            eq(directory.key, key),
            eq(directory.userId, row.userId),
            eq(directory.claimedAt, row.claimedAt),
          ),
        )
        .returning({ key: directory.key })
        .get());
    if (!taken) {
      await release(shards, userId, mine);
      return entries[index]!;
    }
    mine.push(key);
  }
  return null;
}

/** Gives keys back (by key hash), only where `userId` holds them: a key another user took over stays theirs. */
async function release(shards: Shards, userId: string, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await Promise.all(
    [...byShard(shards, keys)].map(async ([db, group]) => {
      for (const part of slices(group, KEYS_PER_SELECT)) {
        await db
          .delete(directory)
          .where(and(inArray(directory.key, part), eq(directory.userId, userId)))
          .run();
      }
    }),
  );
}

/** Gives entries back: a failed write after the claim, an email changed away, a token deleted. */
export async function releaseEntries(
  shards: Shards,
  userId: string,
  entries: readonly DirectoryEntry[],
): Promise<void> {
  if (shards.count === 1 || entries.length === 0) return;
  await release(shards, userId, await Promise.all(entries.map(keyOf)));
}

/** Every key of a deleted user but their files' (after its shard row is gone). */
export async function releaseUser(shards: Shards, userId: string): Promise<void> {
  if (shards.count === 1) return;
  // Not their files' keys (ids and paths): a deleted user's files stay (with `uploadedByUserId` as it was), found by
  // id or path as before. The keys are spread over every shard by their own slots: one indexed delete in each (a
  // user's removal is rare, and its keys cannot be recomputed from what is left).
  await eachShard(shards, (db) =>
    db
      .delete(directory)
      .where(and(eq(directory.userId, userId), notInArray(directory.kind, ["file", "path"])))
      .run(),
  );
}

/**
 * The shard of a row found by an id: the slot a minted id carries (routed-ids.ts), else the directory's `fallback`
 * entry (a row imported under Nhost's id, or a client's), else undefined: the row exists nowhere.
 */
export async function shardOfMinted(
  shards: Shards,
  id: string,
  fallback: DirectoryEntry,
): Promise<Db | undefined> {
  return shardOfRouted(shards, id) ?? shardOfEntry(shards, fallback);
}

/**
 * The owners of many keys at once, by `<kind>:<value>` (the Nhost import reads a batch's emails, numbers and
 * identities in a few statements, not one each). Empty with one shard, and while the directory is built: callers
 * read the home database then.
 */
export async function ownersOfMany(
  shards: Shards,
  entries: readonly DirectoryEntry[],
): Promise<Map<string, string>> {
  const owners = new Map<string, string>();
  if (!readsDirectory(shards) || entries.length === 0) return owners;
  const named = new Map(
    await Promise.all(
      entries.map(async (entry) => [await keyOf(entry), `${entry.kind}:${entry.value}`] as const),
    ),
  );
  // Each shard's keys at once, in slices under D1's 100 bound values a statement.
  await Promise.all(
    [...byShard(shards, [...named.keys()])].map(async ([db, keys]) => {
      for (const part of slices(keys, KEYS_PER_SELECT)) {
        const rows = await db
          .select({ key: directory.key, userId: directory.userId })
          .from(directory)
          .where(inArray(directory.key, part))
          .all();
        for (const row of rows) owners.set(named.get(row.key)!, row.userId);
      }
    }),
  );
  return owners;
}
