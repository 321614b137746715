import type { FileRow } from "../db/schema";
import type { Deps } from "../services/deps";
import { allows, type Caller } from "./access";
import { badRequest, fileNotFound, internalError, StorageError } from "./errors";
import { evaluatePreconditions, evaluateRange } from "./http-conditions";
import { formatOfMime, hasImageParams, mimeOf, negotiateFormat, parseImageParams } from "./images/params";
import { currentFileWithBucket, recentFileWithBucket } from "./record-cache";
import { type FileWithBucket, objectKey } from "./records";

/** Types a browser would render as a document: sandboxed so an uploaded page cannot act as the site (§3.1). */
const ACTIVE_CONTENT = /^(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xml|application\/xml)\b/i;

/** `inline; filename="…"` with an ASCII fallback and the exact name as RFC 8187 `filename*` when needed. */
function contentDisposition(name: string, download: boolean): string {
  const kind = download ? "attachment" : "inline";
  const ascii = name.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "_");
  if (ascii === name) return `${kind}; filename="${ascii}"`;
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** Headers every answer about the file carries (304 and 412 included). */
function commonHeaders(file: FileRow, cacheControl: string): Headers {
  const headers = new Headers({
    "Cache-Control": cacheControl,
    "Surrogate-Control": cacheControl,
    ETag: file.etag,
    Date: new Date().toUTCString(),
    "X-Content-Type-Options": "nosniff",
  });
  if (ACTIVE_CONTENT.test(file.mimeType))
    headers.set("Content-Security-Policy", "default-src 'none'; sandbox");
  return headers;
}

function contentHeaders(headers: Headers, file: FileRow, url: URL): void {
  headers.set("Accept-Ranges", "bytes");
  headers.set("Surrogate-Key", file.id);
  headers.set("Last-Modified", new Date(file.updatedAt).toUTCString());
  headers.set("Content-Type", file.mimeType);
  headers.set(
    "Content-Disposition",
    contentDisposition(file.name, url.searchParams.get("download") === "true"),
  );
}

/**
 * Who may have a file, and with which `Cache-Control`: the bucket's read rule and cache setting for getFile, the
 * signature's remaining lifetime for a presigned URL. Throws the access error.
 */
export type DeliveryPolicy = (found: FileWithBucket) => string;

const validatorsOf = (file: FileRow) => ({ etag: file.etag, lastModified: new Date(file.updatedAt) });

/** Requests a recent record can answer: revalidations (a 304 needs no bytes) and transformed images. */
function answerableFromRecent(request: Request, url: URL): boolean {
  return (
    hasImageParams(url.searchParams) ||
    request.headers.has("if-none-match") ||
    request.headers.has("if-modified-since")
  );
}

/**
 * getFile, its HEAD, and the contents of a presigned URL (storage contract §3). Revalidations and transformed
 * images may be answered from a record a few seconds old (record-cache.ts), which spares them the D1 read; anything
 * that sends the file's bytes reads the record afresh.
 */
export async function deliverFile(
  deps: Deps,
  request: Request,
  id: string,
  policy: DeliveryPolicy,
): Promise<Response> {
  const url = new URL(request.url);
  if (answerableFromRecent(request, url)) {
    const recent = await recentFileWithBucket(deps, id);
    if (!recent) throw fileNotFound();
    const cacheControl = policy(recent);
    if (recent.file.isUploaded) {
      if (hasImageParams(url.searchParams))
        return serveVariant(deps, request, recent.file, cacheControl, url);
      if (evaluatePreconditions(request.headers, validatorsOf(recent.file)) === "not-modified") {
        return new Response(null, { status: 304, headers: commonHeaders(recent.file, cacheControl) });
      }
    }
  }
  const current = await currentFileWithBucket(deps, id);
  if (!current) throw fileNotFound();
  return serveFile(deps, request, current.file, policy(current));
}

/** getFile's policy: a file the caller may not read is "not found" (no existence leak). */
export const readPolicy =
  (caller: Caller): DeliveryPolicy =>
  ({ file, bucket }) => {
    if (!allows(bucket.rules.read, caller, file.uploadedByUserId)) throw fileNotFound();
    return bucket.cacheControl;
  };

/**
 * The bytes of a file the caller may read: the conditions and the range are decided from the record alone, before
 * R2 is touched, then the bytes are read (as a range when a range was asked for). `cacheControl` is the bucket's,
 * or `max-age=<seconds left>` for a presigned URL.
 */
async function serveFile(
  deps: Deps,
  request: Request,
  file: FileRow,
  cacheControl: string,
): Promise<Response> {
  if (!file.isUploaded) throw new StorageError(403, "file is not uploaded");
  const url = new URL(request.url);
  if (hasImageParams(url.searchParams)) return serveVariant(deps, request, file, cacheControl, url);
  const headers = commonHeaders(file, cacheControl);
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
    objectKey(file),
    range.kind === "partial" ? { range: { offset: range.offset, length: range.length } } : {},
  );
  // A record whose bytes are gone is broken metadata (the ops endpoints list it), not a missing file.
  if (!object) throw internalError(`R2 object ${objectKey(file)} is missing`);
  if (range.kind === "partial") {
    headers.set("Content-Range", `bytes ${range.offset}-${range.offset + range.length - 1}/${file.size}`);
    headers.set("Content-Length", String(range.length));
    return new Response(object.body, { status: 206, headers });
  }
  headers.set("Content-Length", String(file.size));
  return new Response(object.body, { status: 200, headers });
}

/**
 * A transformed image (storage contract §3.4): the output format is negotiated, the variant's ETag derived, and the
 * conditions evaluated against it before anything is decoded; ranges do not apply.
 */
async function serveVariant(
  deps: Deps,
  request: Request,
  file: FileRow,
  cacheControl: string,
  url: URL,
): Promise<Response> {
  const input = formatOfMime(file.mimeType);
  if (!input || input === "avif") {
    throw badRequest(`image manipulation features are not supported for '${file.mimeType}'`);
  }
  const params = parseImageParams(url.searchParams);
  const format = negotiateFormat(params, input, request.headers.get("accept"));
  // Loaded on first use: the codecs' WebAssembly is instantiated when their modules load, and most requests
  // (every auth request included) never transform an image.
  const { variantBody, variantEtag } = await import("./images/variants");
  const etag = await variantEtag(file, params, format);
  const variant = { ...file, etag, mimeType: mimeOf(format) };
  const headers = commonHeaders(variant, cacheControl);
  if (params.format === "auto") headers.set("Vary", "Accept");
  const precondition = evaluatePreconditions(request.headers, {
    etag,
    lastModified: new Date(file.updatedAt),
  });
  if (precondition === "not-modified") return new Response(null, { status: 304, headers });
  if (precondition === "precondition-failed") {
    headers.set("Content-Length", "0");
    return new Response(null, { status: 412, headers });
  }
  contentHeaders(headers, variant, url);
  headers.delete("Accept-Ranges");
  const { body, size } = await variantBody(deps, file, params, format);
  headers.set("Content-Length", String(size));
  return new Response(request.method === "HEAD" ? null : body, { status: 200, headers });
}
