import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { platformFault, RateLimitedError, UnavailableError } from "../../../errors";
import type { AppEnv } from "../../../http/app-env";
import { logError } from "../../../http/context";
import { StorageError } from "../../../storage";

/**
 * Storage's errors (supabase/storage `src/internal/errors`): the body `{"statusCode","code","error","message"}`, the
 * status in it Storage's own, and the HTTP status, as Storage's REST API answers, 400 for every 4xx of its own
 * (`userStatusCode`): storage-js reads the code and the body's `statusCode`. Faults of D1, R2 or a Durable Object
 * are 503 with Retry-After (the house rule), a key refused at the door the gateway's 401.
 */
export class StorageApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    readonly error: string,
    message: string,
    readonly httpStatus: number = statusCode >= 500 || statusCode === 401 || statusCode === 429
      ? statusCode
      : 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const noSuchBucket = () =>
  new StorageApiError(404, "NoSuchBucket", "Bucket not found", "Bucket not found");
export const noSuchKey = () => new StorageApiError(404, "NoSuchKey", "not_found", "Object not found");
export const rowSecurity = () =>
  new StorageApiError(403, "AccessDenied", "Unauthorized", "new row violates row-level security policy");
export const invalidRequest = (message: string) =>
  new StorageApiError(400, "InvalidRequest", "InvalidRequest", message);
export const invalidKey = (key: string) =>
  new StorageApiError(400, "InvalidKey", "InvalidKey", `Invalid key: ${key}`);
export const invalidBucketName = () =>
  new StorageApiError(400, "InvalidBucketName", "Invalid Input", "Bucket name invalid");
export const keyExists = () =>
  new StorageApiError(409, "KeyAlreadyExists", "Duplicate", "The resource already exists");

/** A core refusal in Storage's words, by what it is (its status, and the data the core gives with it). */
function fromCore(error: StorageError): StorageApiError {
  const data = (error.data ?? {}) as Record<string, unknown>;
  const retry = error.headers?.["Retry-After"];
  switch (error.status) {
    case 404:
      return error.message === "bucket not found" ? noSuchBucket() : noSuchKey();
    case 403:
      return error.message === "you are not authorized"
        ? rowSecurity()
        : new StorageApiError(403, "AccessDenied", "Unauthorized", error.message);
    case 409:
      if (error.message === "bucket already exists") {
        return new StorageApiError(409, "BucketAlreadyExists", "Duplicate", "The resource already exists");
      }
      return error.message === "The resource already exists"
        ? keyExists()
        : new StorageApiError(409, "InvalidRequest", "InvalidRequest", error.message);
    case 416:
      return new StorageApiError(416, "InvalidRange", "InvalidRange", error.message, 416, error.headers);
    case 429:
      return new StorageApiError(429, "SlowDown", "too_many_requests", error.message, 429, error.headers);
    case 503:
      return new StorageApiError(503, "DatabaseError", "Service Unavailable", error.message, 503, {
        "Retry-After": retry ?? "5",
      });
    case 400:
      if ("maxUploadFileSize" in data) {
        return new StorageApiError(
          413,
          "EntityTooLarge",
          "Payload too large",
          "The object exceeded the maximum allowed size",
        );
      }
      if ("allowedMimeTypes" in data) {
        const type = /file type (\S+)/.exec(error.message)?.[1] ?? "";
        return new StorageApiError(
          415,
          "InvalidMimeType",
          "invalid_mime_type",
          `mime type ${type} is not supported`,
        );
      }
      if (error.message === "invalid signature") {
        return new StorageApiError(400, "InvalidSignature", "InvalidSignature", "Invalid signature");
      }
      if (error.message === "signature already expired") {
        return new StorageApiError(400, "ExpiredToken", "ExpiredToken", "The provided token has expired.");
      }
      return invalidRequest(error.message);
    default:
      return error.status >= 500
        ? new StorageApiError(500, "InternalError", "Internal", "Internal Server Error")
        : new StorageApiError(error.status, "InvalidRequest", "InvalidRequest", error.message);
  }
}

function toStorageApiError(caught: unknown): StorageApiError {
  if (caught instanceof StorageApiError) return caught;
  if (caught instanceof StorageError) return fromCore(caught);
  if (caught instanceof RateLimitedError) {
    return new StorageApiError(429, "SlowDown", "too_many_requests", "Too many requests", 429, {
      "Retry-After": String(caught.retryAfterSeconds),
    });
  }
  const fault = platformFault(caught) ?? caught;
  if (fault instanceof UnavailableError) {
    return new StorageApiError(503, "DatabaseError", "Service Unavailable", fault.message, 503, {
      "Retry-After": String(fault.retryAfterSeconds),
    });
  }
  if (fault instanceof HTTPException && fault.status < 500)
    return invalidRequest(fault.message || "Bad request");
  return new StorageApiError(500, "InternalError", "Internal", "Internal Server Error");
}

/**
 * The answer to anything thrown under the face's storage: Storage's shape; a HEAD gets the status alone. `tus`: the
 * HTTP status is the error's own (TUS clients act on 404, 409, 413), as Storage's TUS server answers.
 */
export function storageErrorResponse(c: Context<AppEnv>, caught: unknown, tus = false): Response {
  const thrown = toStorageApiError(caught);
  const error =
    tus && thrown.httpStatus !== thrown.statusCode
      ? new StorageApiError(
          thrown.statusCode,
          thrown.code,
          thrown.error,
          thrown.message,
          thrown.statusCode,
          thrown.headers,
        )
      : thrown;
  if (error.statusCode >= 500) logError(c.var.requestId, "supabase-storage", caught);
  const headers = new Headers({ "Cache-Control": "no-store", ...error.headers });
  if (c.req.method === "HEAD") return new Response(null, { status: error.httpStatus, headers });
  headers.set("Content-Type", "application/json");
  const body = {
    statusCode: String(error.statusCode),
    code: error.code,
    error: error.error,
    message: error.message,
  };
  return new Response(JSON.stringify(body), { status: error.httpStatus, headers });
}
