import type { Readable } from "node:stream";
import { fileTypeFromBuffer } from "file-type";
import type { BucketRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { badRequest, StorageError } from "./errors";
import { imageDimensions } from "./images/dimensions";
import { MalformedUpload } from "./multipart";
import { type StoredObject, storeStream } from "./r2-writer";

/** What a bucket says about a file's size and type. */
export type ContentRules = Pick<BucketRow, "minUploadFileSize" | "maxUploadFileSize" | "allowedMimeTypes">;

/** `image/*` matches every image type; anything else matches itself. */
function mimeAllowed(rules: ContentRules, mimeType: string): boolean {
  if (rules.allowedMimeTypes.length === 0) return true;
  return rules.allowedMimeTypes.some((pattern) =>
    pattern.endsWith("/*") ? mimeType.startsWith(pattern.slice(0, -1)) : pattern === mimeType,
  );
}

const typeRefused = (rules: ContentRules, mimeType: string) =>
  badRequest(`file type ${mimeType} is not allowed in this bucket`, {
    allowedMimeTypes: rules.allowedMimeTypes,
  });

/**
 * The rules a file must pass while its bucket is not known yet (an upload whose `bucket-id` may still come after its
 * files, as nhost-js 3.x sends it): whatever at least one bucket accepts. The bucket's own rules are applied once the
 * form is read (`refusal`); with one bucket these are its rules.
 */
export function loosestRules(all: ContentRules[]): ContentRules {
  const anyType = all.some((rules) => rules.allowedMimeTypes.length === 0);
  return {
    minUploadFileSize: Math.min(...all.map((rules) => rules.minUploadFileSize)),
    maxUploadFileSize: Math.max(...all.map((rules) => rules.maxUploadFileSize)),
    allowedMimeTypes: anyType ? [] : [...new Set(all.flatMap((rules) => rules.allowedMimeTypes))],
  };
}

/** The 400 a bucket answers a stored file's size and type with, as `storeContent` would have; none when it passes. */
export function refusal(
  rules: ContentRules,
  file: { size: number; mimeType: string },
): StorageError | undefined {
  if (file.size > rules.maxUploadFileSize) {
    return badRequest(`file too large: more than ${rules.maxUploadFileSize} bytes`, {
      maxUploadFileSize: rules.maxUploadFileSize,
    });
  }
  if (file.size < rules.minUploadFileSize) {
    return badRequest(`file too small: fewer than ${rules.minUploadFileSize} bytes`, {
      minUploadFileSize: rules.minUploadFileSize,
      size: file.size,
    });
  }
  return mimeAllowed(rules, file.mimeType) ? undefined : typeRefused(rules, file.mimeType);
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
 * Streams a file part into R2 under `key`, with a bucket's size and type rules; the MIME type is the declared one
 * or, when that says nothing, sniffed from the first bytes, which also give an image's size. Nothing is written
 * when a rule refuses the file; a body that breaks off is a `MalformedUpload` and leaves nothing either.
 * `customMetadata` is kept with the object (upload-records.ts: which upload wrote a key every upload of an id writes).
 */
export async function storeContent(
  deps: Deps,
  rules: ContentRules,
  key: string,
  part: { mimeType: string; stream: Readable },
  customMetadata?: Record<string, string>,
): Promise<StoredContent> {
  let image: StoredContent["image"] = null;
  const stored = await storeStream(deps.env.FILES, key, bodyOf(part.stream), {
    customMetadata,
    minSize: rules.minUploadFileSize,
    maxSize: rules.maxUploadFileSize,
    mimeTypeOf: async (head) => {
      const mimeType = await resolveMimeType(part.mimeType, head);
      if (!mimeAllowed(rules, mimeType)) throw typeRefused(rules, mimeType);
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
