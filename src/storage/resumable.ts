import { and, eq, lt } from "drizzle-orm";
import { type ResumableUploadRow, resumableUploads } from "../db/schema";
import type { Deps } from "../http/deps";
import { randomUuid } from "../lib/crypto";
import { ResumableMd5 } from "../lib/md5";
import { allows, type Caller } from "./access";
import { badRequest, bucketNotFound, fileNotFound, notAuthorized, StorageError } from "./errors";
import { decidedByHasura } from "./hasura-permissions";
import { findObject, objectExists } from "./object-paths";
import { recordObject } from "./object-writes";
import { findBucket } from "./records";
import { refusal } from "./store-content";

/**
 * Resumable uploads (the Supabase face's TUS, docs/supabase.md "Storage"): the bytes of one object over several
 * requests, each appended at the offset the last one left, into an R2 multipart upload, with the MD5 (the file's ETag)
 * carried from request to request (lib/md5.ts). R2 wants every part but the last the same size and at least 5 MiB,
 * so each request's bytes are one part: the first sets the size, the others keep it, and one request's bytes are held
 * in memory while they go to R2 (at most `MAX_CHUNK`). Once the last byte is in, the object is recorded as an upload's
 * file would be (object-writes.ts `recordObject`): the same rules, path, owner and events.
 */

export const MIN_CHUNK = 5 * 1024 * 1024;
export const MAX_CHUNK = 64 * 1024 * 1024;
/** How long an upload may take from its creation. */
const LIFETIME_MS = 24 * 60 * 60 * 1000;

const conflict = (message: string) => new StorageError(409, message);

/** The rules an upload of `length` bytes of `contentType` at `path` must pass, checked when it is created. */
export async function startResumable(
  deps: Deps,
  input: {
    bucketId: string;
    path: string;
    caller: Caller;
    upsert: boolean;
    length: number;
    contentType: string;
    metadata: Record<string, unknown> | null;
  },
): Promise<ResumableUploadRow> {
  const { caller } = input;
  const bucket = await findBucket(deps.shards.home, input.bucketId);
  if (!bucket) throw bucketNotFound();
  const refused = refusal(bucket, { size: input.length, mimeType: input.contentType });
  if (refused) throw refused;
  const existing = await findObject(deps.shards, bucket.id, input.path);
  if (existing && !input.upsert) throw objectExists();
  // Under Hasura its insert (or update) permission decides when the last bytes are in, with their real size, as an
  // upload's is asked once its bytes are known (object-writes.ts `recordObject`): there is nothing to ask here.
  if (!decidedByHasura(deps.config)) {
    if (existing && !allows(bucket.rules.update, caller, existing.file.uploadedByUserId))
      throw notAuthorized();
    if (!existing && !allows(bucket.rules.upload, caller)) throw notAuthorized();
  }
  const now = deps.now();
  // Uploads left past their time go when a new one starts: their rows, and their parts in R2.
  const expired = await deps.shards.home
    .delete(resumableUploads)
    .where(lt(resumableUploads.expiresAt, now))
    .returning();
  await Promise.all(expired.map((row) => forgetBytes(deps, row)));
  const id = randomUuid();
  // Under a key no file id gives: `<bucket>/<id>` is the key of every upload of a client-chosen id, and this id is in
  // the upload's URL, so a `POST /files` naming it would write over the bytes this upload's file is recorded with.
  const key = `${bucket.id}/${id}/resumable`;
  const multipart = await deps.env.FILES.createMultipartUpload(key, {
    httpMetadata: { contentType: input.contentType },
  });
  const row = {
    id,
    bucketId: bucket.id,
    path: input.path,
    ownerId: caller.kind === "user" ? caller.id : null,
    upsert: input.upsert,
    length: input.length,
    offset: 0,
    partSize: null,
    completed: false,
    objectKey: key,
    r2UploadId: multipart.uploadId,
    parts: [],
    md5: ResumableMd5.start().save(),
    contentType: input.contentType,
    metadata: input.metadata,
    createdAt: now,
    expiresAt: now + LIFETIME_MS,
  };
  await deps.shards.home.insert(resumableUploads).values(row);
  return row;
}

/** An upload of the caller's (its creator, or the admin for any), alive; else not found. */
export async function findResumable(deps: Deps, id: string, caller: Caller): Promise<ResumableUploadRow> {
  const row = await deps.shards.home.select().from(resumableUploads).where(eq(resumableUploads.id, id)).get();
  const theirs = row && (caller.kind === "admin" || (caller.kind === "user" && caller.id === row.ownerId));
  if (!row || !theirs || row.expiresAt < deps.now()) throw fileNotFound();
  return row;
}

/** The parts in R2 (or the joined object) of an upload that will not be recorded. */
async function forgetBytes(deps: Deps, row: ResumableUploadRow): Promise<void> {
  if (row.completed) await deps.env.FILES.delete(row.objectKey);
  else
    await deps.env.FILES.resumeMultipartUpload(row.objectKey, row.r2UploadId)
      .abort()
      .catch(() => {});
}

/** Termination: the upload and its bytes go. */
export async function cancelResumable(deps: Deps, id: string, caller: Caller): Promise<void> {
  const row = await findResumable(deps, id, caller);
  const gone = await deps.shards.home
    .delete(resumableUploads)
    .where(eq(resumableUploads.id, row.id))
    .returning()
    .get();
  if (gone) await forgetBytes(deps, gone);
}

/** One request's bytes: the whole rest, or a part of the size the first one set (at least 5 MiB). */
function checkChunk(row: ResumableUploadRow, size: number): void {
  const rest = row.length - row.offset;
  if (size > rest) throw badRequest(`the upload has ${rest} bytes left; ${size} were sent`);
  if (size > MAX_CHUNK) throw badRequest(`a request carries at most ${MAX_CHUNK} bytes`);
  if (size === rest) return;
  if (size < MIN_CHUNK || (row.partSize !== null && size !== row.partSize)) {
    throw badRequest(
      `every request but the last carries the same number of bytes, at least ${MIN_CHUNK} (${row.partSize ?? "set by the first"})`,
    );
  }
}

/**
 * Appends `bytes` at `offset`. Two requests at one offset: one moves it on (a conditional update), the other is 409.
 * The last bytes join the parts in R2, then the object is recorded. Answers the new offset, and the file once
 * recorded.
 */
export async function appendResumable(
  deps: Deps,
  row: ResumableUploadRow,
  caller: Caller,
  offset: number,
  bytes: Uint8Array,
) {
  if (offset !== row.offset) throw conflict(`the upload is at offset ${row.offset}`);
  if (!row.completed) {
    checkChunk(row, bytes.length);
    const multipart = deps.env.FILES.resumeMultipartUpload(row.objectKey, row.r2UploadId);
    const part = await multipart.uploadPart(row.parts.length + 1, bytes);
    const parts = [...row.parts, { partNumber: part.partNumber, etag: part.etag }];
    const md5 = ResumableMd5.resume(row.md5).update(bytes).save();
    const last = row.offset + bytes.length === row.length;
    if (last) await multipart.complete(parts);
    const moved = await deps.shards.home
      .update(resumableUploads)
      .set(
        last
          ? { completed: true, parts, md5 }
          : { offset: offset + bytes.length, parts, md5, partSize: row.partSize ?? bytes.length },
      )
      .where(
        and(
          eq(resumableUploads.id, row.id),
          eq(resumableUploads.offset, offset),
          eq(resumableUploads.completed, false),
        ),
      )
      .returning()
      .get();
    if (!moved) throw conflict("another request appended at this offset");
    if (!last) return { offset: moved.offset };
    row = moved;
  }
  return { offset: row.length, file: await finish(deps, row, caller) };
}

/**
 * Records a joined upload. The row is taken first (one request records it). A failure while recording ends the
 * upload: its bytes go (the record's failure paths remove them too), and the client's retry finds no upload and, as
 * TUS clients do, starts a new one.
 */
async function finish(deps: Deps, row: ResumableUploadRow, caller: Caller) {
  const taken = await deps.shards.home
    .delete(resumableUploads)
    .where(and(eq(resumableUploads.id, row.id), eq(resumableUploads.completed, true)))
    .returning()
    .get();
  if (!taken) throw conflict("another request is recording this upload");
  try {
    return await recordObject(deps, {
      bucketId: row.bucketId,
      path: row.path,
      caller,
      upsert: row.upsert,
      key: row.objectKey,
      stored: {
        size: row.length,
        etag: `"${ResumableMd5.resume(row.md5).hex()}"`,
        mimeType: row.contentType,
        image: null,
      },
      metadata: row.metadata,
    });
  } catch (error) {
    await deps.env.FILES.delete(row.objectKey);
    throw error;
  }
}
