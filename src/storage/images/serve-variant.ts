import type { FileRow } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { countRequest } from "../../rate-limits/buckets";
import { addressKey } from "../../rate-limits/client-address";
import { badRequest, fileNotFound, StorageError } from "../errors";
import { commonHeaders, contentHeaders, type Delivery, type Refresh } from "../file-headers";
import { evaluatePreconditions } from "../http-conditions";
import { type Fit, geometryOf } from "./fit";
import { checkInput, checkOutput, MAX_AVIF_PIXELS } from "./limits";
import {
  HEIF_MIME_TYPES,
  type ImageParams,
  mimeOf,
  negotiateFormat,
  normaliseParams,
  type OutputFormat,
  parseImageParams,
  sameFormatOf,
} from "./params";
import { cachedVariant, makeVariant, SourceGone, variantEtag } from "./variants";

const sizeOf = (file: FileRow) =>
  file.imageWidth && file.imageHeight ? { width: file.imageWidth, height: file.imageHeight } : null;

/**
 * The output format and the normalised parameters. With the image's size on record the output size is known here,
 * so the output limits are checked before anything is read, and `f=auto` only picks AVIF for an output AVIF may
 * encode (limits.ts). `fit` is not in the storage API's query: a face that has one (Supabase's `resize`) gives it.
 */
function plan(
  file: FileRow,
  request: Request,
  url: URL,
  fit: Fit | undefined,
): { params: ImageParams; format: OutputFormat } {
  const input = sameFormatOf(file.mimeType);
  if (!input) {
    throw badRequest(`image manipulation features are not supported for '${file.mimeType}'`);
  }
  const asked: ImageParams = { ...parseImageParams(url.searchParams), ...(fit ? { fit } : {}) };
  const source = sizeOf(file);
  // Refused from the record, before a byte is read or anything decoded (the transformer checks again).
  checkInput(file.size, source, HEIF_MIME_TYPES.includes(file.mimeType));
  const size = source ? geometryOf(source, asked) : null;
  const avifFits = !size || size.width * size.height <= MAX_AVIF_PIXELS;
  const format = negotiateFormat(asked, input, request.headers.get("accept"), avifFits);
  const params = normaliseParams(asked, format, source);
  if (source) checkOutput({ width: params.width!, height: params.height! }, format === "avif");
  return { params, format };
}

/**
 * A transformation that misses the variant cache costs real CPU: it is counted per client address and per file
 * (`TRANSFORM`, `TRANSFORM_FILE`), so neither one client nor one image can keep the transformer busy.
 */
async function countTransformation(deps: Deps, request: Request, file: FileRow): Promise<void> {
  const { rateLimits } = deps.config;
  const now = deps.now();
  const address = addressKey(request.headers.get("cf-connecting-ip") ?? "unknown");
  // The address is counted by the TRANSFORM binding where there is one, so only the file's object is called.
  const refusals = await Promise.all([
    countRequest(deps.env, rateLimits, "TRANSFORM", { address }, now),
    countRequest(deps.env, rateLimits, "TRANSFORM_FILE", { account: `file:${file.id}` }, now),
  ]);
  const retryAfter = Math.max(...refusals.map((refusal) => refusal?.retryAfterSeconds ?? 0));
  if (retryAfter > 0) {
    throw new StorageError(429, "too many image transformations: try again later", {
      headers: { "Retry-After": String(retryAfter) },
    });
  }
}

/**
 * A transformed image (storage contract §3.4): the output format is negotiated, the variant's ETag derived, and the
 * conditions evaluated against it before anything is decoded; ranges do not apply. When the record's bytes are gone
 * from R2 (replaced since the record was read), the record is read again once.
 */
export async function serveVariant(
  deps: Deps,
  request: Request,
  file: FileRow,
  delivery: Delivery,
  refresh: Refresh,
  fit?: Fit,
  retried = false,
): Promise<Response> {
  const url = new URL(request.url);
  const { params, format } = plan(file, request, url, fit);
  const etag = await variantEtag(file, params, format);
  const variant = { ...file, etag, mimeType: mimeOf(format) };
  const headers = commonHeaders(variant, delivery);
  if (url.searchParams.get("f") === "auto") headers.set("Vary", "Accept");
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
  const cached = await cachedVariant(deps, file, params, format);
  let body: ReadableStream | Uint8Array;
  let size: number;
  if (cached) {
    [body, size] = [cached.body, cached.size];
  } else {
    await countTransformation(deps, request, file);
    try {
      body = await makeVariant(deps, file, params, format);
    } catch (error) {
      if (!(error instanceof SourceGone)) throw error;
      if (retried) throw fileNotFound();
      const fresh = await refresh();
      return serveVariant(deps, request, fresh.file, fresh.delivery, refresh, fit, true);
    }
    size = body.length;
  }
  headers.set("Content-Length", String(size));
  return new Response(request.method === "HEAD" ? null : body, { status: 200, headers });
}
