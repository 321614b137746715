import type { Readable } from "node:stream";
import { and, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";
import { type BucketRow, type FileRow, files } from "../db/schema";
import type { Deps } from "../http/deps";
import { metadataSchema } from "../lib/json-metadata";
import { allows, type Caller } from "./access";
import { badRequest, bucketNotFound, notAuthorized, StorageError } from "./errors";
import {
  bucketAnchor,
  duplicateFile,
  mintFileId,
  type PlacedFile,
  placeNewFile,
  randomSlot,
  releaseUnused,
} from "./file-shards";
import { decidedByHasura, hasuraForgetFiles } from "./hasura-permissions";
import { MalformedUpload, multipartParts, readSmallPart } from "./multipart";
import { findBucket, initialObjectKey, toWireFile, type WireFile } from "./records";
import { storeContent } from "./store-content";
import { storeFileUnderHasura } from "./upload-hasura";

/** `metadata[]` entries (storage contract §2): one per file, in order. */
const metadataEntry = z.object({
  id: z.uuid("id must be a UUID").optional(),
  name: z.string().min(1).max(1024).optional(),
  metadata: metadataSchema.nullable().optional(),
});
type MetadataEntry = z.infer<typeof metadataEntry>;

function parseMetadata(text: string): MetadataEntry {
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

/** Which ids an upload gives the files the client names none for: its uploader's slot, or one drawn for it. */
function idsFor(caller: Caller): () => string {
  const uploaderId = caller.kind === "user" ? caller.id : null;
  const slot = randomSlot();
  return () => mintFileId(uploaderId, slot);
}

/**
 * Holds `id` for this upload with a record that says `is_uploaded = false`, by one INSERT that fails on an existing
 * id. Two uploads racing for one client-chosen id: one holds it, the other is refused before writing a byte (it
 * used to overwrite the first one's bytes under the same key). With several shards the id's directory claim comes
 * first, so the two cannot both win in different shards (file-shards.ts).
 */
async function reserve(
  deps: Deps,
  bucket: BucketRow,
  id: string,
  minted: boolean,
  name: string,
  caller: Caller,
): Promise<PlacedFile> {
  const now = deps.now();
  const uploadedByUserId = caller.kind === "user" ? caller.id : null;
  const placement = await placeNewFile(deps.shards, id, uploadedByUserId, minted, now);
  const { db } = placement;
  const insert = db
    .insert(files)
    .values({
      id,
      bucketId: bucket.id,
      name,
      size: 0,
      mimeType: "application/octet-stream",
      etag: '""',
      objectKey: initialObjectKey({ bucketId: bucket.id, id }),
      isUploaded: false,
      uploadedByUserId,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing()
    .returning();
  let row: FileRow | undefined;
  try {
    [row] = db === deps.shards.home ? await insert : (await db.batch([bucketAnchor(db, bucket), insert]))[1];
  } finally {
    if (!row) await releaseUnused(deps.shards, placement, id);
  }
  if (!row) throw duplicateFile(id);
  return { row, placement };
}

/** Stores one file part under a reserved id; on any failure the reservation and any bytes written go. */
async function storeFile(
  deps: Deps,
  bucket: BucketRow,
  part: { filename: string; mimeType: string; stream: Readable },
  entry: MetadataEntry | undefined,
  caller: Caller,
  newId: () => string,
): Promise<PlacedFile> {
  const id = entry?.id ?? newId();
  const reserved = await reserve(deps, bucket, id, !entry?.id, entry?.name ?? (part.filename || id), caller);
  try {
    const stored = await storeContent(deps, bucket, reserved.row.objectKey, part);
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
      .where(eq(files.id, id))
      .returning()
      .get();
    return { row: row!, placement: reserved.placement };
  } catch (error) {
    await discard(deps, [reserved]);
    throw error;
  }
}

/** The files of this upload by the shard that holds them (with one uploader, or one shard: one group). */
function byShard(stored: PlacedFile[]): Map<Db, FileRow[]> {
  const groups = new Map<Db, FileRow[]>();
  for (const { row, placement } of stored)
    groups.set(placement.db, [...(groups.get(placement.db) ?? []), row]);
  return groups;
}

/**
 * Removes files of this upload that will not be kept: records first (nothing points at the bytes), then their ids'
 * directory claims, then bytes, then (under Hasura) the app's rows this upload inserted.
 */
async function discard(deps: Deps, stored: PlacedFile[]): Promise<void> {
  for (const [db, rows] of byShard(stored)) {
    for (let i = 0; i < rows.length; i += 90) {
      const ids = rows.slice(i, i + 90).map((row) => row.id);
      await db.delete(files).where(and(inArray(files.id, ids), eq(files.isUploaded, false)));
    }
  }
  for (const { row, placement } of stored) await releaseUnused(deps.shards, placement, row.id);
  const rows = stored.map(({ row }) => row);
  if (rows.length > 0) await deps.env.FILES.delete(rows.map((row) => row.objectKey));
  if (rows.length > 0 && decidedByHasura(deps.config)) {
    await hasuraForgetFiles(
      deps,
      rows.map((row) => row.id),
    );
  }
}

/**
 * Makes the files of this upload visible, all at once in each shard (D1 binds at most 100 parameters a statement).
 * An upload's files share a shard unless it has no uploader and names ids of its own (file-shards.ts).
 */
async function publish(deps: Deps, stored: PlacedFile[]): Promise<WireFile[]> {
  const now = deps.now();
  for (const [db, rows] of byShard(stored)) {
    const statements = [];
    for (let i = 0; i < rows.length; i += 90) {
      const ids = rows.slice(i, i + 90).map((row) => row.id);
      statements.push(
        db.update(files).set({ isUploaded: true, updatedAt: now }).where(inArray(files.id, ids)),
      );
    }
    const [first, ...rest] = statements;
    if (first) await db.batch([first, ...rest]);
  }
  return stored.map(({ row }) => toWireFile({ ...row, isUploaded: true, updatedAt: now }));
}

async function uploadBucket(deps: Deps, bucketId: string, caller: Caller): Promise<BucketRow> {
  const bucket = await findBucket(deps.shards.home, bucketId);
  if (!bucket) throw bucketNotFound();
  // Under Hasura, its insert permission decides, file by file (upload-hasura.ts).
  if (!decidedByHasura(deps.config) && !allows(bucket.rules.upload, caller)) throw notAuthorized();
  return bucket;
}

/**
 * `metadata[]` parts pair with `file[]` parts by order (nhost-js sends every metadata[] first). When any are sent
 * there must be exactly one per file: a file whose entry has not arrived when its bytes do, or an entry without a
 * file, is a malformed upload. The message names the part that is extra.
 */
function checkPairing(entries: number, filesSeen: number, finished: boolean): void {
  if (entries === 0) return;
  if (filesSeen > entries) {
    throw new MalformedUpload(`file[] part ${filesSeen} has no metadata[] part (${entries} sent before it)`);
  }
  if (finished && entries > filesSeen) {
    throw new MalformedUpload(`metadata[] part ${filesSeen + 1} has no file[] part (${filesSeen} sent)`);
  }
}

/**
 * uploadFiles (`POST /files`): files are processed in order, each under an id reserved first. A file refused by a
 * rule (size, type, a taken id) stops the request: the files before it are kept and listed (`processedFiles`). A
 * malformed request (a body cut short, metadata[] parts that do not pair with the files) keeps nothing. Files become
 * visible together at the end.
 */
export async function uploadFiles(deps: Deps, request: Request, caller: Caller): Promise<WireFile[]> {
  const stored: PlacedFile[] = [];
  const newId = idsFor(caller);
  let entries: MetadataEntry[] = [];
  let filesSeen = 0;
  let bucketId = "default";
  let bucket: BucketRow | undefined;
  try {
    for await (const part of multipartParts(request)) {
      if (part.name === "metadata[]") {
        // Node clients send each metadata[] as a field, browsers as a Blob with an empty file name (client.md §11).
        const text = part.kind === "field" ? part.value : await readSmallPart(part.stream, 64 * 1024);
        entries = [...entries, parseMetadata(text)];
        // After the file it pairs with, it came too late: that file was stored without it.
        if (entries.length <= filesSeen) {
          throw new MalformedUpload(`metadata[] part ${entries.length} comes after its file[] part`);
        }
      } else if (part.kind === "field") {
        if (part.name === "bucket-id") bucketId = part.value;
      } else if (part.name === "file[]") {
        filesSeen += 1;
        checkPairing(entries.length, filesSeen, false);
        bucket ??= await uploadBucket(deps, bucketId, caller);
        const store = decidedByHasura(deps.config) ? storeFileUnderHasura : storeFile;
        stored.push(await store(deps, bucket, part, entries[filesSeen - 1], caller, newId));
      } else {
        part.stream.resume(); // not ours: let the parser move past it
      }
    }
    checkPairing(entries.length, filesSeen, true);
  } catch (error) {
    if (error instanceof StorageError && !(error instanceof MalformedUpload)) {
      const kept = await publish(deps, stored);
      throw new StorageError(error.status, error.message, {
        data: error.data,
        extra: { processedFiles: kept },
        // A 503's Retry-After, and the cause for the log.
        headers: error.headers,
        reason: error.reason,
      });
    }
    await discard(deps, stored);
    if (error instanceof MalformedUpload) {
      throw new StorageError(400, error.message, { extra: { processedFiles: [] } });
    }
    throw error;
  }
  if (stored.length === 0) throw badRequest("no file[] part in the upload");
  try {
    return await publish(deps, stored);
  } catch (error) {
    // D1 failed making them visible (503): the reservations and their bytes go, so no record is left without its
    // bytes' upload answered, nor bytes without a visible record; the retry uploads them under the same ids.
    await discard(deps, stored);
    throw error;
  }
}
