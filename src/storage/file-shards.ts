import { and, eq, gte, isNull, sql } from "drizzle-orm";
import { bindingOf, type Db } from "../db/client";
import { claim, type DirectoryEntry, releaseEntries, shardOfEntry } from "../db/directory";
import { idForUser, routedUuid, shardOfRouted } from "../db/routed-ids";
import { type BucketRow, buckets, type FileRow, files } from "../db/schema";
import { type Shards, SLOTS } from "../db/shards";
import { StorageError } from "./errors";

/**
 * Where a file's record lives (docs/scaling.md, "Past one D1 database"), one rule for every path:
 * - an id the service mints carries a slot (routed-ids.ts): its uploader's, or with no uploader (the admin secret) a
 *   slot drawn once per upload. The record is in that slot's shard, found with no lookup;
 * - an id the service did not mint (chosen by the client, imported from Nhost) is kept in its owner's shard, the
 *   uploader's or, with no uploader, the pseudo-user `file:<id>`'s (the subject its events carry), and the directory
 *   holds `file:<id>` for that owner. The claim comes before the record, so one id cannot be created in two shards.
 * With one shard every record is in the home database and the directory is not used.
 */

export const fileEntry = (id: string): DirectoryEntry => ({ kind: "file", value: id });

/** Who holds a client-chosen id in the directory: its uploader, else the file itself (its events' subject). */
export const fileOwner = (id: string, uploaderId: string | null) => uploaderId ?? `file:${id}`;

/** A slot for the files of one upload that has no uploader: uniform over the 4,096 (65,536 is a multiple). */
export function randomSlot(): number {
  return crypto.getRandomValues(new Uint16Array(1))[0]! % SLOTS;
}

/** The id of a new file of `uploaderId`'s, or of an upload without one (`slot`): it routes to its record. */
export const mintFileId = (uploaderId: string | null, slot: number) =>
  uploaderId ? idForUser(uploaderId) : routedUuid(slot);

/** The D1 binding of one of the shards (for reads a replica may serve). */
export function d1Of(shards: Shards, db: Db): D1Database {
  // A moving slot's Db is none of `all`: its own binding waits for the move (src/db/slot-wait.ts).
  return bindingOf(db) ?? shards.allD1[Math.max(0, shards.all.indexOf(db))]!;
}

export const duplicateFile = (id: string) => new StorageError(409, `a file with id ${id} already exists`);

async function hasFile(db: Db, id: string): Promise<boolean> {
  return (await db.select({ one: sql<number>`1` }).from(files).where(eq(files.id, id)).get()) !== undefined;
}

/** Where a new record goes, and who holds its id in the directory (null: nobody needs to, the id routes). */
export interface Placement {
  db: Db;
  owner: string | null;
}

/** A record just written: with the shard that holds it, where the rest of its upload goes. */
export interface PlacedFile {
  row: FileRow;
  placement: Placement;
}

/**
 * The shard for a new file's record. A client-chosen id is claimed in the directory first; taken by another owner,
 * or already a record where its slot points (an id the service minted: those have no directory entry), it is the
 * duplicate id today's unique key answers (409). The caller writes the record, or gives the claim back
 * (`releaseUnused`).
 */
export async function placeNewFile(
  shards: Shards,
  id: string,
  uploaderId: string | null,
  minted: boolean,
  now: number,
): Promise<Placement> {
  const placement = placementOf(shards, id, uploaderId, minted);
  const { db, owner } = placement;
  if (owner === null) return placement;
  if (await claim(shards, owner, [fileEntry(id)], now)) throw duplicateFile(id);
  const named = shardOfRouted(shards, id);
  if (named && named !== db && (await hasFile(named, id))) {
    await releaseUnused(shards, placement, id);
    throw duplicateFile(id);
  }
  return placement;
}

/** `placeNewFile`'s choice, before its claim: the shard of a new record, and who claims its id. */
function placementOf(shards: Shards, id: string, uploaderId: string | null, minted: boolean): Placement {
  if (shards.count === 1) return { db: shards.home, owner: null };
  if (minted) return { db: shardOfRouted(shards, id)!, owner: null };
  const owner = fileOwner(id, uploaderId);
  return { db: shards.ofUser(owner), owner };
}

/**
 * Gives a client-chosen id's claim back when its record was not written, or went (a failed upload). Not while the
 * owner's shard has a record under the id: an upload refused because the owner already has it keeps that one's entry.
 */
export async function releaseUnused(shards: Shards, placement: Placement, id: string): Promise<void> {
  if (placement.owner === null || (await hasFile(placement.db, id))) return;
  await releaseEntries(shards, placement.owner, [fileEntry(id)]);
}

/**
 * Whether a write that failed may have written all the same: anything but a refusal (a 4xx: D1 answered, and what
 * the refused write made was undone where it was refused). A fault's statement may have run before its answer was
 * lost (D1 applied it, then the connection dropped): the caller cannot tell, and undoes what it may have made.
 */
export const mayHaveWritten = (error: unknown): boolean =>
  !(error instanceof StorageError && error.status < 500);

/** An undo after a failed write: logged when it fails too (D1 may be failing still), never in the way of the 503. */
export async function undone(what: string, undo: () => Promise<unknown>): Promise<void> {
  await undo().catch((error: unknown) =>
    console.error(JSON.stringify({ level: "error", what: `${what} undone`, detail: String(error) })),
  );
}

/** A new file's record as its upload asked D1 for it, before D1 answered. */
export interface Reserving {
  id: string;
  uploaderId: string | null;
  /** As `placeNewFile` was told: the id routes to its record; else it was claimed in the directory. */
  minted: boolean;
  /** When the upload began to write it (`deps.now()`): its record's `created_at` is not older. */
  since: number;
  /**
   * The key its bytes go under, when only this attempt writes that key (a drawn id's, or a version's): the record is
   * this request's only if it has it.
   */
  objectKey?: string;
  /**
   * The upload its reservation names (`files.upload_attempt`), when the caller drew it (upload-records.ts
   * `storeFile`, whose key `<bucket>/<id>` is every attempt's at a chosen id). With neither this nor `objectKey` the
   * record is told by its id, uploader and age: enough for an id the attempt drew or a fresh one, not for a
   * client-chosen id another upload of the same uploader may have reserved while this one's answer was lost.
   */
  attempt?: string;
}

/**
 * After a new file's write failed for a fault: the record D1 may have inserted although its answer was lost, and the
 * claim of its id, go. Without this the 503's retry met its own reservation: 409 "a file with id … already exists"
 * (by path, "The resource already exists"). Only a record this request can have written goes: under its id, not
 * uploaded, its uploader's, created since it began, with its bytes' key when that is this attempt's (a file another
 * uploader holds under a client-chosen id, one uploaded, or another upload of the same uploader that reserved the
 * id while this one's answer was lost, stays); the claim only while no record of its owner has the id
 * (`releaseUnused`). Best effort: left behind, the daily sweep of reservations (housekeeping.ts) removes it.
 */
export async function forgetLostReservation(shards: Shards, file: Reserving): Promise<void> {
  const placement = placementOf(shards, file.id, file.uploaderId, file.minted);
  const uploader =
    file.uploaderId === null ? isNull(files.uploadedByUserId) : eq(files.uploadedByUserId, file.uploaderId);
  const attempt = and(
    file.objectKey === undefined ? undefined : eq(files.objectKey, file.objectKey),
    file.attempt === undefined ? undefined : eq(files.uploadAttempt, file.attempt),
  );
  await undone(`the reservation of file ${file.id}`, async () => {
    await placement.db
      .delete(files)
      .where(
        and(
          eq(files.id, file.id),
          eq(files.isUploaded, false),
          uploader,
          gte(files.createdAt, file.since),
          attempt,
        ),
      );
    await releaseUnused(shards, placement, file.id);
  });
}

/**
 * A new record's write (`write`), with what it may have reserved undone when it fails other than by a refusal
 * (`forgetLostReservation`): kept, a reservation whose answer was lost refused the 503's retry 409 "a file with id …
 * already exists". `reserving` names the record once the write has run (an id it drew is known only then).
 */
export async function reservedOrForgotten<T>(
  shards: Shards,
  reserving: () => Reserving | undefined,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const reserved = reserving();
    if (reserved && mayHaveWritten(error)) await forgetLostReservation(shards, reserved);
    throw error;
  }
}

/**
 * After publishing an upload's files failed: D1 may have made them visible before its answer was lost. Each is made
 * not uploaded again, only while the record is still the one this upload wrote (its `upload_attempt`, not another
 * upload's of the same id after a DELETE) with the bytes it wrote (their key and ETag, which a replace since would
 * have changed). Taken back so, it still holds its id: the upload's `discard` removes its bytes
 * while no other upload can reserve the id and write the same key (a chosen id's `<bucket>/<id>`), then the record.
 * Deleted here (as it was), the id was free before the bytes went, and another upload's bytes under it were deleted.
 * `held`: the records taken back; `unsure`: those D1 failed at (logged), which may be visible with their bytes. A
 * record in neither is no longer this upload's (deleted, or replaced with bytes of its own meanwhile).
 */
export async function unpublishLost(
  stored: PlacedFile[],
): Promise<{ held: PlacedFile[]; unsure: PlacedFile[] }> {
  const held: PlacedFile[] = [];
  const unsure: PlacedFile[] = [];
  for (const placed of stored) {
    const { row, placement } = placed;
    try {
      const back = await placement.db
        .update(files)
        .set({ isUploaded: false })
        .where(
          and(
            eq(files.id, row.id),
            eq(files.uploadAttempt, row.uploadAttempt ?? ""),
            eq(files.objectKey, row.objectKey),
            eq(files.etag, row.etag),
          ),
        )
        .returning({ id: files.id })
        .get();
      if (back) held.push(placed);
    } catch (error) {
      console.error(
        JSON.stringify({
          level: "error",
          what: `the publishing of file ${row.id} undone`,
          detail: String(error),
        }),
      );
      unsure.push(placed);
    }
  }
  return { held, unsure };
}

/** After a record was deleted: its id's entry goes (a no-op for a minted id, which has none, and with one shard). */
export async function releaseDeleted(
  shards: Shards,
  file: { id: string; uploadedByUserId: string | null },
): Promise<void> {
  await releaseEntries(shards, fileOwner(file.id, file.uploadedByUserId), [fileEntry(file.id)]);
}

/**
 * Reads a file's record with `read` in the shard that holds it: the slot's for a routed id, else (or when the slot's
 * shard has none: a client chose an id that looks routed) the directory's owner's. Undefined when none has it.
 */
export async function inFileShard<T>(
  shards: Shards,
  id: string,
  read: (db: Db) => Promise<T | undefined>,
): Promise<{ found: T; db: Db } | undefined> {
  const named = shardOfRouted(shards, id);
  if (named) {
    const found = await read(named);
    if (found !== undefined) return { found, db: named };
    if (shards.count === 1) return undefined;
  }
  const owned = await shardOfEntry(shards, fileEntry(id));
  if (!owned || owned === named) return undefined;
  const found = await read(owned);
  return found === undefined ? undefined : { found, db: owned };
}

/**
 * The shard a read of the file should try first, without reading it: the slot's, or the directory's owner's.
 * Undefined when neither names one (then no record has the id).
 */
export async function likelyFileShard(shards: Shards, id: string): Promise<Db | undefined> {
  return shardOfRouted(shards, id) ?? shardOfEntry(shards, fileEntry(id));
}

/**
 * Buckets are global (home), and `files.bucket_id` is a foreign key, which D1 enforces: a shard gets a copy of the
 * bucket's row before a record there names it. Only the key matters: settings and rules are always read from home.
 * In the batch that writes the record; nothing is written when the copy is there already.
 */
export function bucketAnchor(db: Db, bucket: BucketRow) {
  return db.insert(buckets).values(bucket).onConflictDoNothing();
}
