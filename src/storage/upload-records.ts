import type { Readable } from "node:stream";
import { and, eq, inArray } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { z } from "zod";
import type { Db } from "../db/client";
import { type BucketRow, type FileRow, files } from "../db/schema";
import type { Deps } from "../http/deps";
import { randomUuid } from "../lib/crypto";
import { metadataSchema } from "../lib/json-metadata";
import type { Caller } from "./access";
import { badRequest, deletedWhileUploading } from "./errors";
import {
  bucketAnchor,
  duplicateFile,
  type PlacedFile,
  placeNewFile,
  releaseUnused,
  unpublishLost,
} from "./file-shards";
import { decidedByHasura, hasuraForgetFiles } from "./hasura-permissions";
import { initialObjectKey, toWireFile, type WireFile } from "./records";
import { type ContentRules, storeContent } from "./store-content";
import type { StagedBytes } from "./upload-hasura";

/** `metadata[]` entries (storage contract §2): one per file, paired by order. */
const metadataEntry = z.object({
  id: z.uuid("id must be a UUID").optional(),
  name: z.string().min(1).max(1024).optional(),
  metadata: metadataSchema.nullable().optional(),
});
export type MetadataEntry = z.infer<typeof metadataEntry>;

export function parseMetadata(text: string): MetadataEntry {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw badRequest("metadata[] must be JSON");
  }
  const parsed = metadataEntry.safeParse(json);
  if (!parsed.success) throw badRequest(`metadata[]: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  return parsed.data;
}

/** What the upload holds of one file until the end: its record (not visible yet), or under Hasura its bytes alone. */
export interface Held {
  placed?: PlacedFile;
  staged?: StagedBytes;
}

type NewFile = typeof files.$inferInsert;

/**
 * Holds `values.id` for this upload with a record that says `is_uploaded = false`, by one INSERT that fails on an
 * existing id. Two uploads racing for one client-chosen id: one holds it, the other is refused (409). With several
 * shards the id's directory claim comes first, so the two cannot both win in different shards (file-shards.ts).
 * `replacing`: a record of this upload the new one takes the place of, deleted in the same batch when they share a
 * shard (a metadata[] naming the id after its file's bytes came: upload-settle.ts). The record names the upload that
 * holds it (`values.uploadAttempt`, drawn here when the caller did not): every later statement of the upload does
 * (`heldBy`).
 */
export async function reserve(
  deps: Deps,
  bucket: BucketRow,
  values: NewFile,
  minted: boolean,
  replacing?: PlacedFile,
): Promise<PlacedFile> {
  const { id } = values;
  const placement = await placeNewFile(deps.shards, id, values.uploadedByUserId ?? null, minted, deps.now());
  const { db } = placement;
  const statements: BatchItem<"sqlite">[] = [];
  if (replacing) {
    const drop = replacing.placement.db.delete(files).where(heldBy([replacing.row]));
    if (replacing.placement.db === db) statements.push(drop);
    else await drop;
  }
  if (db !== deps.shards.home) statements.push(bucketAnchor(db, bucket));
  const insert = db
    .insert(files)
    .values({ ...values, uploadAttempt: values.uploadAttempt ?? randomUuid() })
    .onConflictDoNothing()
    .returning();
  let row: FileRow | undefined;
  try {
    if (statements.length === 0) [row] = await insert;
    else {
      const batch = [...statements, insert] as unknown as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]];
      [row] = (await db.batch(batch)).at(-1) as FileRow[];
    }
  } finally {
    if (!row) await releaseUnused(deps.shards, placement, id);
  }
  if (!row) throw duplicateFile(id);
  return { row, placement };
}

/**
 * Stores one file part under a reserved id; on any failure the reservation and any bytes written go. `path`: the
 * object's key in its bucket, for a file addressed by path (object-writes.ts); its unique index refuses a taken one.
 */
export async function storeFile(
  deps: Deps,
  bucket: BucketRow,
  rules: ContentRules,
  part: { filename: string; mimeType: string; stream: Readable },
  entry: (MetadataEntry & { path?: string }) | undefined,
  caller: Caller,
  newId: () => string,
  attempt = randomUuid(),
): Promise<PlacedFile> {
  const id = entry?.id ?? newId();
  const now = deps.now();
  const reserved = await reserve(
    deps,
    bucket,
    {
      id,
      bucketId: bucket.id,
      name: entry?.name ?? (part.filename || id),
      size: 0,
      mimeType: "application/octet-stream",
      etag: '""',
      objectKey: initialObjectKey({ bucketId: bucket.id, id }),
      isUploaded: false,
      uploadedByUserId: caller.kind === "user" ? caller.id : null,
      path: entry?.path ?? null,
      createdAt: now,
      updatedAt: now,
      uploadAttempt: attempt,
    },
    !entry?.id,
  );
  try {
    const stored = await storeContent(deps, rules, reserved.row.objectKey, part, writtenBy(reserved.row));
    const row = await reserved.placement.db
      .update(files)
      .set({
        size: stored.size,
        mimeType: stored.mimeType,
        etag: stored.etag,
        imageWidth: stored.image?.width ?? null,
        imageHeight: stored.image?.height ?? null,
        metadata: entry?.metadata ?? null,
      })
      .where(heldBy([reserved.row]))
      .returning()
      .get();
    // The reservation went meanwhile (a DELETE of this upload under way): refused, its bytes discarded below.
    if (!row) throw deletedWhileUploading();
    return { row, placement: reserved.placement };
  } catch (error) {
    await discard(deps, [{ placed: reserved }]);
    throw error;
  }
}

/**
 * Gives a reserved record the bucket, name and metadata the rest of the form said (upload-settle.ts), in place: its
 * id stays. Only a record not yet visible is changed.
 */
export async function amend(
  deps: Deps,
  placed: PlacedFile,
  values: Pick<FileRow, "bucketId" | "name" | "metadata">,
  bucket: BucketRow,
): Promise<PlacedFile> {
  const { db } = placed.placement;
  const update = db
    .update(files)
    .set(values)
    .where(heldBy([placed.row]))
    .returning();
  const [row] =
    db === deps.shards.home
      ? await update
      : ((await db.batch([bucketAnchor(db, bucket), update]))[1] as FileRow[]);
  // A reservation under way goes only by a DELETE of it (or the housekeeping's sweep of uploads left for hours).
  if (!row) throw deletedWhileUploading();
  return { row, placement: placed.placement };
}

/**
 * This upload's own records among `rows`, still not visible: by their ids and the attempt each was reserved with
 * (`upload_attempt`), never another upload's record under the same id. A DELETE of this upload under way removes its
 * record, and a new upload of the same client-chosen id may reserve it again, under the same key `<bucket>/<id>`:
 * matched by id alone, this upload wrote its size, type and ETag into that record and published it (a 201 for a file
 * that was another request's, another user's when it was theirs), or deleted it while discarding its own.
 */
const heldBy = (rows: Pick<FileRow, "id" | "uploadAttempt">[]) =>
  and(
    inArray(
      files.id,
      rows.map((row) => row.id),
    ),
    inArray(
      files.uploadAttempt,
      rows.flatMap((row) => (row.uploadAttempt ? [row.uploadAttempt] : [])),
    ),
    eq(files.isUploaded, false),
  );

/** Records a statement of `heldBy` names at most: D1 binds at most 100 parameters, two per record here. */
const HELD_PER_STATEMENT = 45;

/** `rows` in groups of `HELD_PER_STATEMENT`. */
function chunks<T>(rows: T[]): T[][] {
  const groups: T[][] = [];
  for (let i = 0; i < rows.length; i += HELD_PER_STATEMENT)
    groups.push(rows.slice(i, i + HELD_PER_STATEMENT));
  return groups;
}

/** The records of this upload by the shard that holds them (with one uploader, or one shard: one group). */
function byShard(stored: PlacedFile[]): Map<Db, FileRow[]> {
  const groups = new Map<Db, FileRow[]>();
  for (const { row, placement } of stored)
    groups.set(placement.db, [...(groups.get(placement.db) ?? []), row]);
  return groups;
}

/**
 * Removes what this upload holds that will not be kept, its records not visible: bytes first (a record's, and staged
 * bytes that never got one), while the records still hold their ids; then the records, their ids' directory claims,
 * and (under Hasura) the app's rows of those records. A chosen id's bytes go under `<bucket>/<id>` at every
 * attempt: with the record and claim gone first, another upload could reserve the id and store its bytes there
 * before this delete removed them (a 201 for a file without bytes); and under that key only bytes this upload wrote
 * last go (`wroteLast`). A crash between the two steps leaves a reservation without bytes, which the daily sweep
 * removes. The bytes' delete failing, the rest goes all the same (the bytes left are no record's, and the next upload
 * of the id writes over them) and its error is thrown.
 */
export async function discard(deps: Deps, held: Held[]): Promise<void> {
  const bytes = await removeBytes(deps, held).then(
    () => undefined,
    (error: unknown) => ({ error }),
  );
  await forgetRecords(deps, held);
  if (bytes) throw bytes.error;
}

/** `discard`'s first step. A record's bytes whose `wroteLast` failed stay (its error thrown after the others go). */
async function removeBytes(deps: Deps, held: Held[]): Promise<void> {
  const staged = held.flatMap(({ placed, staged }) =>
    staged && staged.key !== placed?.row.objectKey ? [staged.key] : [],
  );
  const records = held.flatMap(({ placed }) => (placed ? [placed.row] : []));
  const checked = await Promise.allSettled(records.map((row) => wroteLast(deps, row)));
  const keys = [...staged, ...records.filter((_, i) => isTrue(checked[i]!)).map((row) => row.objectKey)];
  if (keys.length > 0) await deps.env.FILES.delete(keys);
  const failed = checked.find((result) => result.status === "rejected");
  if (failed) throw failed.reason;
}

const isTrue = (result: PromiseSettledResult<boolean>) => result.status === "fulfilled" && result.value;

/** What an upload keeps with the bytes it writes under a record's key (`wroteLast` reads it). */
const writtenBy = (row: FileRow) => (row.uploadAttempt ? { upload: row.uploadAttempt } : undefined);

/**
 * `<bucket>/<id>`: the key every upload of the record's id writes (a version's key is one upload's; so is a
 * provisional id's once its record moved to the id a late metadata[] named).
 */
function sharedKey(row: FileRow): boolean {
  const [, ...rest] = row.objectKey.split("/");
  return rest.length === 1 && rest[0] === row.id;
}

/**
 * Whether the bytes under a record's key are the ones this upload wrote. A key of its own, always; the key every
 * upload of the id writes, only while R2 says this upload wrote it last (`writtenBy`): its record may be gone (a
 * DELETE of the upload under way) and the id reserved by another upload, whose bytes then stay. Its own go even when
 * written over the other's, which are lost either way: that file then answers 404, never with this upload's bytes.
 */
async function wroteLast(deps: Deps, row: FileRow): Promise<boolean> {
  if (!sharedKey(row)) return true;
  const object = await deps.env.FILES.head(row.objectKey);
  return object !== null && object.customMetadata?.upload === row.uploadAttempt;
}

/**
 * `discard`'s second step: the records this upload still holds, their ids' claims, and under Hasura the app's rows
 * of the records it removed (not of a record gone meanwhile: the app's row under that id may be the next upload's).
 */
async function forgetRecords(deps: Deps, held: Held[]): Promise<void> {
  const stored = held.flatMap(({ placed }) => (placed ? [placed] : []));
  const removed: string[] = [];
  for (const [db, rows] of byShard(stored)) {
    for (const group of chunks(rows)) {
      const gone = await db.delete(files).where(heldBy(group)).returning({ id: files.id });
      removed.push(...gone.map(({ id }) => id));
    }
  }
  for (const { row, placement } of stored) await releaseUnused(deps.shards, placement, row.id);
  if (removed.length > 0 && decidedByHasura(deps.config)) await hasuraForgetFiles(deps, removed);
}

/**
 * After publishing these files failed (D1 may have made them visible before its answer was lost): those taken back
 * (file-shards.ts `unpublishLost`) are discarded, bytes first. One D1 failed to take back may be visible: its bytes
 * stay (never a visible file without them), and only a record still not visible goes, with its claim. Without this
 * the 503 left visible files whose bytes were removed, and the retry met them.
 */
export async function discardLostPublish(deps: Deps, stored: PlacedFile[]): Promise<void> {
  const { held, unsure } = await unpublishLost(stored);
  await forgetRecords(
    deps,
    unsure.map((placed) => ({ placed })),
  );
  await discard(
    deps,
    held.map((placed) => ({ placed })),
  );
}

/**
 * Makes the files of this upload visible, all at once in each shard (D1 binds at most 100 parameters a statement),
 * each only while this upload still holds it (`heldBy`). An upload's files share a shard unless it has no uploader
 * and names ids of its own (file-shards.ts).
 */
export async function publish(deps: Deps, stored: PlacedFile[]): Promise<WireFile[]> {
  const now = deps.now();
  for (const [db, rows] of byShard(stored)) {
    const statements = chunks(rows).map((group) =>
      db
        .update(files)
        .set({ isUploaded: true, updatedAt: now })
        .where(heldBy(group))
        .returning({ id: files.id }),
    );
    const [first, ...rest] = statements;
    if (!first) continue;
    const published = (await db.batch([first, ...rest])).flat().length;
    // A record deleted meanwhile (a DELETE of this upload under way) is not answered 201: the caller's undo takes
    // back the others (`discardLostPublish`), so the upload is refused whole.
    if (published < rows.length) throw deletedWhileUploading();
  }
  return stored.map(({ row }) => toWireFile({ ...row, isUploaded: true, updatedAt: now }));
}
