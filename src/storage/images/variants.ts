import type { FileRow } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { sha256Hex } from "../../lib/crypto";
import { badRequest } from "../errors";
import { type ImageParams, type OutputFormat, variantKey } from "./params";

/**
 * Transformed images are cached in R2 under `_variants/<fileId>/<source md5>/<normalised params>`: a repeated request
 * reads the variant and decodes nothing, and a replaced file (new MD5) never serves a stale variant. The prefix
 * starts with `_`, which no bucket id can (buckets.ts), so a bucket's file keys never fall under it.
 */
export const VARIANTS_PREFIX = "_variants/";

const variantObjectKey = (file: FileRow, key: string) =>
  `${VARIANTS_PREFIX}${file.id}/${file.etag.replaceAll('"', "")}/${key}`;

/**
 * The variant's own ETag (improvement: the reference reused the original's, which breaks caches): derived from the
 * source ETag and the normalised parameters, so it is known before anything is transformed.
 */
export async function variantEtag(file: FileRow, params: ImageParams, format: OutputFormat): Promise<string> {
  return `"${(await sha256Hex(`${file.etag}|${variantKey(params, format)}`)).slice(0, 32)}"`;
}

/** The record's bytes are gone from R2 (replaced or deleted since the record was read). */
export class SourceGone extends Error {
  override name = "SourceGone";
}

/** Whether a variant is cached; a miss means a transformation, which the caller may want to rate-limit first. */
export async function cachedVariant(
  deps: Deps,
  file: FileRow,
  params: ImageParams,
  format: OutputFormat,
): Promise<R2ObjectBody | null> {
  return deps.env.FILES.get(variantObjectKey(file, variantKey(params, format)));
}

/**
 * Makes a variant in the transformer Worker (src/storage/images/worker.ts) from the source bytes streamed out of R2, and
 * caches it after the answer is sent.
 */
export async function makeVariant(
  deps: Deps,
  file: FileRow,
  params: ImageParams,
  format: OutputFormat,
): Promise<Uint8Array> {
  const transformer = deps.env.IMAGE_TRANSFORMER;
  if (!transformer) {
    throw badRequest("image manipulation is not available: the image transformer Worker is not deployed");
  }
  const source = await deps.env.FILES.get(file.objectKey);
  if (!source) throw new SourceGone(file.objectKey);
  const result = await transformer.transform(source.body, params, format);
  if (!result.ok) throw badRequest(result.message);
  deps.background(deps.env.FILES.put(variantObjectKey(file, variantKey(params, format)), result.bytes));
  return result.bytes;
}

/** Cached variants of a file: all of them (delete), or those made from the bytes with `etag` (replace). */
export async function deleteVariants(bucket: R2Bucket, fileId: string, etag?: string): Promise<void> {
  const prefix = `${VARIANTS_PREFIX}${fileId}/${etag ? `${etag.replaceAll('"', "")}/` : ""}`;
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix, cursor, limit: 1000 });
    if (page.objects.length > 0) await bucket.delete(page.objects.map((object) => object.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
}
