import type { FileRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { allows, type Caller } from "./access";
import { fileNotFound, StorageError } from "./errors";
import { commonHeaders, contentHeaders, type Delivery, type Refresh, validatorsOf } from "./file-headers";
import { evaluatePreconditions, evaluateRange } from "./http-conditions";
import type { Fit } from "./images/fit";
import { hasImageParams } from "./images/params";
import { serveVariant } from "./images/serve-variant";
import { currentFileWithBucket, recentFileWithBucket } from "./record-cache";
import type { FileWithBucket } from "./records";

/**
 * Who may have a file, and how it may be cached: the bucket's read rule and cache setting for getFile, the
 * signature's remaining lifetime for a presigned URL. Throws the access error.
 */
export type DeliveryPolicy = (found: FileWithBucket) => Delivery;

function refresher(deps: Deps, id: string, policy: DeliveryPolicy, stale: FileRow): Refresh {
  return async () => {
    const current = await currentFileWithBucket(deps, id);
    // Same key: the bytes are really gone (a delete raced this request); the file is not there any more.
    if (!current || current.file.objectKey === stale.objectKey) throw fileNotFound();
    return { file: current.file, delivery: policy(current) };
  };
}

/**
 * getFile, its HEAD, and the contents of a presigned URL (storage contract §3), answered from a record a few seconds
 * old or read from a nearby replica (record-cache.ts says why that answer is never wrong about the bytes): the
 * primary is not asked on the way. A replace or delete between the record and the bytes is read again once, from
 * the primary: a replaced file is served from its new bytes, a deleted one is a 404. `image.fit`: how a transformed
 * image meets its width and height (images/fit.ts), for a face whose API has more than the storage API's `contain`.
 */
export async function deliverFile(
  deps: Deps,
  request: Request,
  id: string,
  policy: DeliveryPolicy,
  image: { fit?: Fit } = {},
): Promise<Response> {
  const current = await recentFileWithBucket(deps, id);
  if (!current) throw fileNotFound();
  const refresh = refresher(deps, id, policy, current.file);
  const served = await serveFile(deps, request, current.file, policy(current), refresh, image.fit);
  if (served) return served;
  const fresh = await refresh();
  const retried = await serveFile(deps, request, fresh.file, fresh.delivery, refresh, image.fit);
  if (!retried) throw fileNotFound();
  return retried;
}

/** getFile's policy: a file the caller may not read is "not found" (no existence leak). */
export const readPolicy =
  (caller: Caller): DeliveryPolicy =>
  ({ file, bucket }) => {
    if (!allows(bucket.rules.read, caller, file.uploadedByUserId)) throw fileNotFound();
    return { cacheControl: bucket.cacheControl, shared: bucket.rules.read === "public" };
  };

/**
 * The bytes of a file the caller may read: the conditions and the range are decided from the record alone, before
 * R2 is touched, then the bytes are read (as a range when a range was asked for). Null when R2 no longer has the
 * record's bytes.
 */
async function serveFile(
  deps: Deps,
  request: Request,
  file: FileRow,
  delivery: Delivery,
  refresh: Refresh,
  fit: Fit | undefined,
): Promise<Response | null> {
  if (!file.isUploaded) throw new StorageError(403, "file is not uploaded");
  const url = new URL(request.url);
  if (hasImageParams(url.searchParams)) return serveVariant(deps, request, file, delivery, refresh, fit);
  const headers = commonHeaders(file, delivery);
  const validators = validatorsOf(file);
  const precondition = evaluatePreconditions(request.headers, validators);
  if (precondition === "not-modified") return new Response(null, { status: 304, headers });
  if (precondition === "precondition-failed") {
    headers.set("Content-Length", "0");
    return new Response(null, { status: 412, headers });
  }
  contentHeaders(headers, file, url);
  const range =
    request.method === "GET"
      ? evaluateRange(request.headers, file.size, validators)
      : { kind: "full" as const };
  if (range.kind === "unsatisfiable") {
    throw new StorageError(416, "range not satisfiable", {
      headers: { "Content-Range": `bytes */${file.size}` },
    });
  }
  if (request.method === "HEAD") {
    headers.set("Content-Length", String(file.size));
    return new Response(null, { status: 200, headers });
  }
  const object = await deps.env.FILES.get(
    file.objectKey,
    range.kind === "partial" ? { range: { offset: range.offset, length: range.length } } : {},
  );
  // Bytes not there, or not the record's (never expected: a key is written once): the record is read afresh.
  if (!object || object.size !== file.size) return null;
  if (range.kind === "partial") {
    headers.set("Content-Range", `bytes ${range.offset}-${range.offset + range.length - 1}/${file.size}`);
    headers.set("Content-Length", String(range.length));
    return new Response(object.body, { status: 206, headers });
  }
  headers.set("Content-Length", String(file.size));
  return new Response(object.body, { status: 200, headers });
}
