import { badRequest } from "./errors";

/**
 * R2 accepts a stream only when its length is known, and an upload's parts arrive with no length. So bytes are
 * gathered in parts of 5 MiB (R2's minimum for every part but the last; those parts must all be the same size): a
 * file that ends within the first part is one `put`, a longer one a multipart upload. At most one part is held in
 * memory, never the whole file. The MD5 (the contract's ETag) is computed as the bytes pass, since the ETag R2
 * gives a multipart object is not the MD5 of the bytes.
 */
export const PART_SIZE = 5 * 1024 * 1024;

export interface StoredObject {
  size: number;
  /** Quoted hex MD5 of the bytes. */
  etag: string;
  mimeType: string;
}

/** The chunks as one array of `length` bytes. */
export function concat(chunks: Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

const hex = (buffer: ArrayBuffer) =>
  [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, "0")).join("");

/**
 * Streams `chunks` into `key`. `mimeTypeOf` sees the first bytes (up to one part) before anything is written, for
 * sniffing. Fewer than `minSize` or more than `maxSize` bytes stops the upload with a 400 and nothing is written
 * (an existing object under `key` stays as it was).
 */
export async function storeStream(
  bucket: R2Bucket,
  key: string,
  chunks: AsyncIterable<Uint8Array>,
  options: {
    minSize: number;
    maxSize: number;
    mimeTypeOf: (head: Uint8Array) => Promise<string>;
    /** Kept with the object (R2's custom metadata): who wrote it, for a writer that must tell its bytes later. */
    customMetadata?: Record<string, string>;
  },
): Promise<StoredObject> {
  const { customMetadata } = options;
  const md5 = new crypto.DigestStream("MD5");
  const hashing = md5.getWriter();
  let pending: Uint8Array[] = [];
  let pendingLength = 0;
  let size = 0;
  let upload: R2MultipartUpload | undefined;
  let mimeType: string | undefined;
  const parts: R2UploadedPart[] = [];

  const takePart = (): Uint8Array => {
    const all = concat(pending, pendingLength);
    const part = all.slice(0, PART_SIZE);
    const rest = all.slice(PART_SIZE);
    pending = rest.length > 0 ? [rest] : [];
    pendingLength = rest.length;
    return part;
  };

  try {
    for await (const chunk of chunks) {
      size += chunk.length;
      if (size > options.maxSize) {
        throw badRequest(`file too large: more than ${options.maxSize} bytes`, {
          maxUploadFileSize: options.maxSize,
        });
      }
      await hashing.write(chunk);
      pending.push(chunk);
      pendingLength += chunk.length;
      while (pendingLength >= PART_SIZE) {
        const part = takePart();
        if (!upload) {
          mimeType = await options.mimeTypeOf(part);
          upload = await bucket.createMultipartUpload(key, {
            httpMetadata: { contentType: mimeType },
            customMetadata,
          });
        }
        parts.push(await upload.uploadPart(parts.length + 1, part));
      }
    }
    await hashing.close();
    // Checked before the last write: a replaced file keeps its old bytes when the new ones are refused.
    if (size < options.minSize) {
      throw badRequest(`file too small: fewer than ${options.minSize} bytes`, {
        minUploadFileSize: options.minSize,
        size,
      });
    }
    const last = concat(pending, pendingLength);
    if (upload) {
      if (last.length > 0) parts.push(await upload.uploadPart(parts.length + 1, last));
      await upload.complete(parts);
    } else {
      mimeType = await options.mimeTypeOf(last);
      await bucket.put(key, last, { httpMetadata: { contentType: mimeType }, customMetadata });
    }
    return { size, etag: `"${hex(await md5.digest)}"`, mimeType: mimeType! };
  } catch (error) {
    await upload?.abort().catch(() => {});
    throw error;
  }
}
