import type { Readable } from "node:stream";
import { eq } from "drizzle-orm";
import { fileTypeFromBuffer } from "file-type";
import { z } from "zod";
import { type BucketRow, files } from "../db/schema";
import { randomUuid } from "../lib/crypto";
import type { Deps } from "../services/deps";
import { allows, type Caller } from "./access";
import { badRequest, bucketNotFound, notAuthorized, StorageError } from "./errors";
import { multipartParts, readSmallPart } from "./multipart";
import { type StoredObject, storeStream } from "./r2-writer";
import { findBucket, objectKey, toWireFile, type WireFile } from "./records";

/** `metadata[]` entries (storage contract §2): one per file, in order. */
const metadataEntry = z.object({
  id: z.uuid("id must be a UUID").optional(),
  name: z.string().min(1).max(1024).optional(),
  metadata: z.record(z.string(), z.unknown()).nullable().optional(),
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

/** `image/*` matches every image type; anything else matches itself. */
function mimeAllowed(bucket: BucketRow, mimeType: string): boolean {
  if (bucket.allowedMimeTypes.length === 0) return true;
  return bucket.allowedMimeTypes.some((pattern) =>
    pattern.endsWith("/*") ? mimeType.startsWith(pattern.slice(0, -1)) : pattern === mimeType,
  );
}

/** The declared type, unless it says nothing (empty or octet-stream): then the first bytes decide. */
async function resolveMimeType(declared: string, head: Uint8Array): Promise<string> {
  if (declared && declared !== "application/octet-stream") return declared;
  return (await fileTypeFromBuffer(head.subarray(0, 4100)))?.mime ?? "application/octet-stream";
}

/**
 * Streams a file part into R2 under `key`, with the bucket's size and type rules; the MIME type is the declared one
 * or, when that says nothing, sniffed from the first bytes. Nothing is written when a rule refuses the file.
 */
export function storeContent(
  deps: Deps,
  bucket: BucketRow,
  key: string,
  part: { mimeType: string; stream: Readable },
): Promise<StoredObject> {
  return storeStream(deps.env.FILES, key, part.stream as AsyncIterable<Uint8Array>, {
    minSize: bucket.minUploadFileSize,
    maxSize: bucket.maxUploadFileSize,
    mimeTypeOf: async (head) => {
      const mimeType = await resolveMimeType(part.mimeType, head);
      if (!mimeAllowed(bucket, mimeType)) {
        throw badRequest(`file type ${mimeType} is not allowed in this bucket`, {
          allowedMimeTypes: bucket.allowedMimeTypes,
        });
      }
      return mimeType;
    },
  });
}

/** Stores one file part in R2 and records it; nothing is recorded for a file that failed. */
async function storeFile(
  deps: Deps,
  bucket: BucketRow,
  part: { filename: string; mimeType: string; stream: Readable },
  entry: MetadataEntry | undefined,
  caller: Caller,
): Promise<WireFile> {
  const id = entry?.id ?? randomUuid();
  if (await deps.db.select({ id: files.id }).from(files).where(eq(files.id, id)).get()) {
    throw badRequest(`a file with id ${id} already exists`);
  }
  const stored = await storeContent(deps, bucket, objectKey({ bucketId: bucket.id, id }), part);
  const now = deps.now();
  const row = await deps.db
    .insert(files)
    .values({
      id,
      bucketId: bucket.id,
      name: entry?.name ?? (part.filename || id),
      size: stored.size,
      mimeType: stored.mimeType,
      etag: stored.etag,
      isUploaded: true,
      uploadedByUserId: caller.kind === "user" ? caller.id : null,
      metadata: entry?.metadata ?? null,
      createdAt: now,
      updatedAt: now,
    })
    .returning()
    .get();
  return toWireFile(row!);
}

async function uploadBucket(deps: Deps, bucketId: string, caller: Caller): Promise<BucketRow> {
  const bucket = await findBucket(deps.db, bucketId);
  if (!bucket) throw bucketNotFound();
  if (!allows(bucket.rules.upload, caller)) throw notAuthorized();
  return bucket;
}

/**
 * uploadFiles (`POST /files`): files are processed in order; the first failure stops the request and its error
 * lists what was already stored (`processedFiles`).
 */
export async function uploadFiles(deps: Deps, request: Request, caller: Caller): Promise<WireFile[]> {
  const processed: WireFile[] = [];
  const entries: MetadataEntry[] = [];
  let bucketId = "default";
  let bucket: BucketRow | undefined;
  try {
    for await (const part of multipartParts(request)) {
      if (part.kind === "field") {
        if (part.name === "bucket-id") bucketId = part.value;
        else if (part.name === "metadata[]") entries.push(parseMetadata(part.value));
        continue;
      }
      if (part.name === "metadata[]") {
        // Browsers send each metadata[] as a Blob with an empty file name (client.md §11).
        entries.push(parseMetadata(await readSmallPart(part.stream, 64 * 1024)));
        continue;
      }
      if (part.name !== "file[]") {
        part.stream.resume(); // not ours: let the parser move past it
        continue;
      }
      bucket ??= await uploadBucket(deps, bucketId, caller);
      processed.push(await storeFile(deps, bucket, part, entries[processed.length], caller));
    }
  } catch (error) {
    if (error instanceof StorageError) {
      throw new StorageError(error.status, error.message, {
        data: error.data,
        extra: { processedFiles: processed },
      });
    }
    throw error;
  }
  if (processed.length === 0) throw badRequest("no file[] part in the upload");
  return processed;
}
