import type { Readable } from "node:stream";
import { fileTypeFromBuffer } from "file-type";
import type { BucketRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { badRequest, StorageError } from "./errors";
import { imageDimensions } from "./images/dimensions";
import { MalformedUpload } from "./multipart";
import { type StoredObject, storeStream } from "./r2-writer";

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

export interface StoredContent extends StoredObject {
  /** The image's size as shown, when its header could be read from the first bytes. */
  image: { width: number; height: number } | null;
}

/**
 * Streams a file part into R2 under `key`, with the bucket's size and type rules; the MIME type is the declared one
 * or, when that says nothing, sniffed from the first bytes, which also give an image's size. Nothing is written
 * when a rule refuses the file; a body that breaks off is a `MalformedUpload` and leaves nothing either.
 */
export async function storeContent(
  deps: Deps,
  bucket: BucketRow,
  key: string,
  part: { mimeType: string; stream: Readable },
): Promise<StoredContent> {
  let image: StoredContent["image"] = null;
  const stored = await storeStream(deps.env.FILES, key, bodyOf(part.stream), {
    minSize: bucket.minUploadFileSize,
    maxSize: bucket.maxUploadFileSize,
    mimeTypeOf: async (head) => {
      const mimeType = await resolveMimeType(part.mimeType, head);
      if (!mimeAllowed(bucket, mimeType)) {
        throw badRequest(`file type ${mimeType} is not allowed in this bucket`, {
          allowedMimeTypes: bucket.allowedMimeTypes,
        });
      }
      if (mimeType.startsWith("image/")) image = imageDimensions(head);
      return mimeType;
    },
  });
  return { ...stored, image };
}

/** A part's bytes; the stream failing (the body ended before the part did) is the client's fault: a 400. */
async function* bodyOf(stream: Readable): AsyncIterable<Uint8Array> {
  try {
    for await (const chunk of stream as AsyncIterable<Uint8Array>) yield chunk;
  } catch (error) {
    if (error instanceof StorageError) throw error;
    throw new MalformedUpload(error instanceof Error ? error.message : String(error));
  }
}
