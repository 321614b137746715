import type { FileRow } from "../../db/schema";
import { sha256Hex } from "../../lib/crypto";
import type { Deps } from "../../services/deps";
import { badRequest } from "../errors";
import { objectKey } from "../records";
import { type ImageParams, type OutputFormat, variantKey } from "./params";
import { MAX_INPUT_BYTES, transformImage } from "./transform";

/**
 * Transformed images are cached in R2 under `variants/<fileId>/<source md5>/<normalised params>`: a repeated request
 * reads the variant and decodes nothing, and a replaced file (new MD5) never serves a stale variant.
 */
export const VARIANTS_PREFIX = "variants/";

const variantObjectKey = (file: FileRow, key: string) =>
  `${VARIANTS_PREFIX}${file.id}/${file.etag.replaceAll('"', "")}/${key}`;

/**
 * The variant's own ETag (improvement: the reference reused the original's, which breaks caches): derived from the
 * source ETag and the normalised parameters, so it is known before anything is transformed.
 */
export async function variantEtag(file: FileRow, params: ImageParams, format: OutputFormat): Promise<string> {
  return `"${(await sha256Hex(`${file.etag}|${variantKey(params, format)}`)).slice(0, 32)}"`;
}

/** The variant's bytes, from the cache or made now (and cached after the answer is sent). */
export async function variantBody(
  deps: Deps,
  file: FileRow,
  params: ImageParams,
  format: OutputFormat,
): Promise<{ body: ReadableStream | Uint8Array; size: number }> {
  const key = variantObjectKey(file, variantKey(params, format));
  const cached = await deps.env.FILES.get(key);
  if (cached) return { body: cached.body, size: cached.size };
  if (file.size > MAX_INPUT_BYTES) {
    throw badRequest(
      `image manipulation parameters out of range: the image is larger than ${MAX_INPUT_BYTES} bytes`,
    );
  }
  const source = await deps.env.FILES.get(objectKey(file));
  if (!source) throw new Error(`R2 object ${objectKey(file)} is missing`);
  const bytes = await transformImage(new Uint8Array(await source.arrayBuffer()), params, format);
  deps.background(deps.env.FILES.put(key, bytes));
  return { body: bytes, size: bytes.length };
}

/** Every cached variant of a file (on delete and replace). */
export async function deleteVariants(bucket: R2Bucket, fileId: string): Promise<void> {
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: `${VARIANTS_PREFIX}${fileId}/`, cursor, limit: 1000 });
    if (page.objects.length > 0) await bucket.delete(page.objects.map((object) => object.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
}
