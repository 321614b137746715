import type { Readable } from "node:stream";
import { type BucketRow, type FileRow, files } from "../db/schema";
import type { Deps } from "../http/deps";
import { randomUuid } from "../lib/crypto";
import type { Caller } from "./access";
import {
  bucketAnchor,
  duplicateFile,
  type PlacedFile,
  type Placement,
  placeNewFile,
  releaseUnused,
} from "./file-shards";
import { hasuraCompleteUpload, hasuraForgetFiles, hasuraInsertFile } from "./hasura-permissions";
import { initialObjectKey } from "./records";
import { type ContentRules, type StoredContent, storeContent } from "./store-content";

/**
 * One file of an upload under Hasura's insert permission (contract move-in §5.1b). The insert is asked with what
 * hasura-storage sends, the real MIME type and size included (a permission may check them), so the bytes are known
 * first; the D1 record and the file's bytes exist only once Hasura said yes:
 *
 * 1. the bytes stream to a key of their own, `<bucket>/<id>/<version>` as a replace writes (storage/replace.ts): no
 *    record points at it, and no other file's bytes are under it (a client-chosen id that is taken changes nothing);
 * 2. `insertFile` under the caller's permission: refused (403), or Hasura unavailable (503), removes the bytes and
 *    leaves nothing anywhere;
 * 3. the row is completed as the service (`isUploaded`, the ETag, the metadata), as hasura-storage's
 *    `PopulateMetadata` does with the admin secret;
 * 4. the D1 record is written, not uploaded yet, like every file of the upload until upload.ts publishes them all,
 *    in the shard file-shards.ts says (a client-chosen id claimed in the directory first).
 * A failure after 2 (Hasura gone in 3, the id taken in D1) removes the row this upload inserted again, and the bytes.
 * A crash between the steps leaves bytes no record names (`ops/list-orphans`) or a row saying `isUploaded: false`,
 * what hasura-storage also leaves; never a record without its row.
 */
export async function storeFileUnderHasura(
  deps: Deps,
  bucket: BucketRow,
  part: { filename: string; mimeType: string; stream: Readable },
  entry: { id?: string; name?: string; metadata?: Record<string, unknown> | null; path?: string } | undefined,
  caller: Caller,
  newId: () => string,
): Promise<PlacedFile> {
  const id = entry?.id ?? newId();
  // A size or type the bucket refuses is a 400 here, with nothing written and nothing asked.
  const staged = await stageBytes(deps, bucket, bucket.id, id, part);
  return recordUnderHasura(deps, bucket, staged, { ...entry, id, minted: !entry?.id }, caller);
}

/** A file's bytes in R2 with no record yet: under a key of their own, with what was learnt as they streamed. */
export interface StagedBytes {
  /** The id its key was made with: the file's, unless a metadata[] after the bytes names another. */
  id: string;
  key: string;
  content: StoredContent;
  filename: string;
}

/** Step 1: the bytes, under `<bucket>/<id>/<version>`, with `rules` (a bucket's, or the loosest: store-content.ts). */
export async function stageBytes(
  deps: Deps,
  rules: ContentRules,
  bucketId: string,
  id: string,
  part: { filename: string; mimeType: string; stream: Readable },
): Promise<StagedBytes> {
  const key = `${initialObjectKey({ bucketId, id })}/${randomUuid()}`;
  return { id, key, content: await storeContent(deps, rules, key, part), filename: part.filename };
}

/**
 * Steps 2 to 4 for bytes staged under `staged.key` (in the upload's order, or once the form is read when the
 * metadata[] came after the file). Any failure removes the bytes and whatever this upload wrote for the file.
 */
export async function recordUnderHasura(
  deps: Deps,
  bucket: BucketRow,
  staged: StagedBytes,
  file: {
    id: string;
    minted: boolean;
    name?: string;
    metadata?: Record<string, unknown> | null;
    path?: string;
  },
  caller: Caller,
): Promise<PlacedFile> {
  const { id, metadata } = file;
  const { key, content: stored } = staged;
  const name = file.name ?? (staged.filename || id);
  try {
    await hasuraInsertFile(deps, caller, {
      id,
      bucketId: bucket.id,
      name,
      mimeType: stored.mimeType,
      size: stored.size,
    });
  } catch (error) {
    await deps.env.FILES.delete(key);
    throw error;
  }
  const uploadedByUserId = caller.kind === "user" ? caller.id : null;
  let placement: Placement | undefined;
  let row: FileRow | undefined;
  try {
    await hasuraCompleteUpload(deps, id, { ...stored, bucketId: bucket.id, name, metadata });
    const now = deps.now();
    placement = await placeNewFile(deps.shards, id, uploadedByUserId, file.minted, now);
    const { db } = placement;
    const insert = db
      .insert(files)
      .values({
        id,
        bucketId: bucket.id,
        name,
        size: stored.size,
        mimeType: stored.mimeType,
        etag: stored.etag,
        objectKey: key,
        isUploaded: false,
        uploadedByUserId,
        path: file.path ?? null,
        imageWidth: stored.image?.width ?? null,
        imageHeight: stored.image?.height ?? null,
        metadata: metadata ?? null,
        createdAt: now,
        updatedAt: now,
        // The upload that wrote it: its later statements name the record by it (upload-records.ts `heldBy`).
        uploadAttempt: randomUuid(),
      })
      .onConflictDoNothing()
      .returning();
    [row] = db === deps.shards.home ? await insert : (await db.batch([bucketAnchor(db, bucket), insert]))[1];
    if (!row) throw duplicateFile(id);
    return { row, placement };
  } catch (error) {
    if (placement && !row) await releaseUnused(deps.shards, placement, id);
    await hasuraForgetFiles(deps, [id]);
    await deps.env.FILES.delete(key);
    throw error;
  }
}
