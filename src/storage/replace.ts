import type { Readable } from "node:stream";
import { and, eq, isNull } from "drizzle-orm";
import { z } from "zod";
import { type FileRow, files } from "../db/schema";
import type { Deps } from "../http/deps";
import { randomUuid } from "../lib/crypto";
import { metadataSchema } from "../lib/json-metadata";
import { allows, type Caller } from "./access";
import { badRequest, fileNotFound, notAuthorized, StorageError } from "./errors";
import { decidedByHasura, hasuraReplaceFile, hasuraSyncFile } from "./hasura-permissions";
import { deleteVariants } from "./images/variants";
import { multipartParts, readSmallPart } from "./multipart";
import { forgetFile } from "./record-cache";
import { findFileWithBucket, type LocatedFile, toWireFile, type WireFile } from "./records";
import { type StoredContent, storeContent } from "./store-content";

const replaceMetadata = z.object({
  name: z.string().min(1).max(1024).optional(),
  metadata: metadataSchema.nullable().optional(),
});

function parseReplaceMetadata(text: string): z.infer<typeof replaceMetadata> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw badRequest("metadata must be JSON");
  }
  const parsed = replaceMetadata.safeParse(json);
  if (!parsed.success) throw badRequest(`metadata: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  return parsed.data;
}

const replacedMeanwhile = () => new StorageError(409, "the file was changed by another request; try again");

/**
 * replaceFile (`PUT /files/{id}`): new bytes for the same id (and optionally a new name and metadata). The bytes go
 * to a new key, `<bucketId>/<id>/<version>`, and the record moves to it by a compare-and-swap on the record as it
 * was when the request began (`unchangedSince`). Of two racing replaces one wins and the other is a 409 whose bytes
 * are removed; a delete during the upload makes it a 404, and a new upload of the id after that delete a 409. The
 * old bytes stay readable until the swap and are removed after it. The first `file` part is used; further ones are
 * read past and ignored (docs/decisions.md). Under Hasura (hasura-permissions.ts), the app's row takes the new values
 * under the caller's update permission between the upload and the swap: nothing the file is made of changes before
 * Hasura said yes.
 */
export async function replaceFile(
  deps: Deps,
  request: Request,
  id: string,
  caller: Caller,
): Promise<WireFile> {
  const found = await findFileWithBucket(deps.shards, id);
  if (!found) throw fileNotFound();
  const key = replaceKey(deps, found, caller);
  let entry: z.infer<typeof replaceMetadata> = {};
  let stored: (StoredContent & { filename: string }) | undefined;
  try {
    for await (const part of multipartParts(request)) {
      if (part.kind === "field") {
        if (part.name === "metadata") entry = parseReplaceMetadata(part.value);
      } else if (part.name === "metadata") {
        entry = parseReplaceMetadata(await readSmallPart(part.stream, 64 * 1024));
      } else if (part.name === "file" && !stored) {
        stored = { ...(await storeContent(deps, found.bucket, key, part)), filename: part.filename };
      } else {
        part.stream.resume();
      }
    }
  } catch (error) {
    // A broken or refused request changes nothing: the new bytes, if any, go; the record keeps the old ones.
    if (stored) await deps.env.FILES.delete(key);
    throw error;
  }
  if (!stored) throw badRequest("a file part is required");
  const name = entry.name ?? (stored.filename || found.file.name);
  return toWireFile(await swapContent(deps, found, caller, key, stored, { name, metadata: entry.metadata }));
}

/** The update rule (else 403), and the key the new bytes go to. Under Hasura, its permission decides later. */
function replaceKey(deps: Deps, found: LocatedFile, caller: Caller): string {
  const { file, bucket } = found;
  if (!decidedByHasura(deps.config) && !allows(bucket.rules.update, caller, file.uploadedByUserId)) {
    throw notAuthorized();
  }
  if (!file.isUploaded) throw replacedMeanwhile();
  return `${bucket.id}/${file.id}/${randomUuid()}`;
}

/**
 * New bytes already in R2 under `key` (a resumable upload's) for a file found by its path: the update rule, then the
 * same swap as every replace. `metadata` undefined keeps the file's.
 */
export async function replaceWithStored(
  deps: Deps,
  found: LocatedFile,
  caller: Caller,
  key: string,
  stored: StoredContent,
  metadata: Record<string, unknown> | undefined,
): Promise<FileRow> {
  replaceKey(deps, found, caller);
  return swapContent(deps, found, caller, key, stored, { name: found.file.name, metadata });
}

/**
 * New bytes for a file found by its path (the Supabase face's upsert and `update`), from one body part: the same
 * rules, key and swap as replaceFile. `metadata` undefined keeps the file's.
 */
export async function replaceFromPart(
  deps: Deps,
  found: LocatedFile,
  caller: Caller,
  part: { mimeType: string; stream: Readable },
  metadata: Record<string, unknown> | undefined,
): Promise<FileRow> {
  const key = replaceKey(deps, found, caller);
  const stored = await storeContent(deps, found.bucket, key, part);
  return swapContent(deps, found, caller, key, stored, { name: found.file.name, metadata });
}

/**
 * The record as the request found it: the same record (the upload that wrote it, `upload_attempt`), uploaded, on the
 * same bytes (key and ETag), and not replaced or moved since (`updated_at`, which both set). The key alone is not the
 * record: a delete and a new upload of the same id meanwhile make a record under the same first key, `<bucket>/<id>`,
 * which a swap matched by key took for the old one — it moved an upload still under way onto the replace's bytes,
 * whose background delete of "the old bytes" then removed the new upload's (test/storage/races-and-breakage.test.ts).
 */
const unchangedSince = (file: FileRow) =>
  and(
    eq(files.id, file.id),
    file.uploadAttempt === null ? isNull(files.uploadAttempt) : eq(files.uploadAttempt, file.uploadAttempt),
    eq(files.objectKey, file.objectKey),
    eq(files.etag, file.etag),
    eq(files.isUploaded, true),
    eq(files.updatedAt, file.updatedAt),
  );

/** Hasura's say (under STORAGE_PERMISSIONS=hasura), then the compare-and-swap of the record onto the new bytes. */
async function swapContent(
  deps: Deps,
  found: LocatedFile,
  caller: Caller,
  key: string,
  stored: StoredContent,
  entry: { name: string; metadata?: Record<string, unknown> | null },
): Promise<FileRow> {
  const { file, bucket, db } = found;
  const { name } = entry;
  const hasura = decidedByHasura(deps.config);
  if (hasura) {
    // Refused or unanswered: the new bytes go, and the record and its bytes are as they were.
    await hasuraReplaceFile(deps, caller, file.id, {
      ...stored,
      bucketId: bucket.id,
      name,
      metadata: entry.metadata,
    }).catch(async (error) => {
      await deps.env.FILES.delete(key);
      throw error;
    });
  }
  const row = await db
    .update(files)
    .set({
      name,
      size: stored.size,
      mimeType: stored.mimeType,
      etag: stored.etag,
      objectKey: key,
      imageWidth: stored.image?.width ?? null,
      imageHeight: stored.image?.height ?? null,
      metadata: entry.metadata === undefined ? file.metadata : entry.metadata,
      updatedAt: deps.now(),
    })
    .where(unchangedSince(file))
    .returning()
    .get();
  forgetFile(file.id);
  if (!row) {
    await deps.env.FILES.delete(key);
    const current = await findFileWithBucket(deps.shards, file.id);
    // The app's row took this replace's values: it goes back to the record that won (or went with the delete).
    if (hasura && current) await hasuraSyncFile(deps, current.file);
    throw current ? replacedMeanwhile() : fileNotFound();
  }
  // The old bytes and the variants made from them are unreachable now (variant keys carry the old MD5).
  deps.background(
    Promise.all([deps.env.FILES.delete(file.objectKey), deleteVariants(deps.env.FILES, file.id, file.etag)]),
  );
  return row;
}
