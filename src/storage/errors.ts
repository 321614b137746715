import type { ContentfulStatusCode } from "hono/utils/http-status";

interface StorageErrorOptions {
  /** `error.data` of the body: details such as the allowed sizes. */
  data?: unknown;
  /** Fields beside `error` in the body: an upload's `processedFiles` so far. */
  extra?: Record<string, unknown>;
  /** Headers the answer must carry (`Content-Range` of a 416). */
  headers?: Record<string, string>;
  /** For the log only. */
  reason?: string;
}

/**
 * A storage failure the client sees (storage contract §3.1): `{"error":{"message","data"}}` and the header
 * `X-Error: <message>`. Messages are the reference's, so existing clients matching on them keep working.
 */
export class StorageError extends Error {
  readonly data?: unknown;
  readonly extra?: Record<string, unknown>;
  readonly headers?: Record<string, string>;
  readonly reason?: string;

  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    options: StorageErrorOptions = {},
  ) {
    super(message);
    this.name = "StorageError";
    Object.assign(this, options);
  }
}

export const fileNotFound = () => new StorageError(404, "file not found");
export const bucketNotFound = () => new StorageError(404, "bucket not found");
export const notAuthorized = () => new StorageError(403, "you are not authorized");
export const badRequest = (message: string, data?: unknown) => new StorageError(400, message, { data });
/**
 * A file deleted (its reservation removed: a DELETE of an upload under way) before its upload ended: the upload is
 * refused, never answered 201 for a record that is gone.
 */
export const deletedWhileUploading = () =>
  new StorageError(409, "the file was deleted while it was being uploaded");
export const internalError = (reason: string) =>
  new StorageError(500, "an internal server error occurred", { reason });
