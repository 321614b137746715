import { nhost } from "./nhost.js";

/** The width the app shows pictures at, in CSS pixels; the service resizes (storage API `w`), the browser doesn't. */
export const THUMBNAIL_WIDTH = 120;

/** Uploads `file` to the `default` bucket (signed-in users may upload; each file is its uploader's). */
export async function uploadPicture(file) {
  const uploaded = await nhost.storage.uploadFiles({ "bucket-id": "default", "file[]": [file] });
  return uploaded.body.processedFiles[0];
}

/**
 * An address an `<img>` can load for the file, resized to `width` by the storage API.
 *
 * An `<img>` sends no Authorization header, and the default bucket's files are private. The recommended way is a
 * presigned URL (`GET /files/{id}/presignedurl`): the signature in the URL is the credential, for this one file, for
 * the bucket's `downloadExpiration` (30 s by default, long enough to load it; ask again for a fresh one), and the
 * access token never goes into an address. The browser then loads, decodes and caches the image itself, and the
 * transformation parameters (`w`, `h`, `q`, `b`, `f`) are added to the URL as to a download.
 *
 * For a bucket with presigned URLs turned off, download with the token instead and show an object URL:
 * `URL.createObjectURL((await nhost.storage.getFile(id, { w: width })).body)` (and revoke it when done).
 */
export async function pictureUrl(fileId, width = THUMBNAIL_WIDTH) {
  const presigned = await nhost.storage.getFilePresignedURL(fileId);
  const url = new URL(presigned.body.url);
  url.searchParams.set("w", String(width));
  return url.toString();
}
