import type { Context } from "hono";
import type { AppEnv } from "../../../http/app-env";
import { deliverFile, FITS, type Fit, findObject, publicReadPolicy, readPolicyFor } from "../../../storage";
import { callerOf } from "./caller";
import { invalidRequest, noSuchKey } from "./errors";
import type { ObjectRef } from "./request";

/**
 * Downloads of objects, by the core's delivery (conditional requests, ranges, the image cache): found by path, then
 * served by id. `authenticated`: the bucket's read rule decides (a file the caller may not read is not found);
 * `public`: only a public bucket's; a signed URL: its token, checked before (its seconds left set the caching). Under
 * `STORAGE_PERMISSIONS=hasura` the app's Hasura decides the first two instead (storage/hasura-permissions.ts).
 */
export type Access = "authenticated" | "public" | { secondsLeft: number };

/** Storage's transformation parameters as the core's (storage contract §3.4): width, height, quality, format. */
const TRANSFORM = { width: "w", height: "h", quality: "q" } as const;

/**
 * The request the core serves: the path and conditional headers as sent, `download` as the core's attachment flag,
 * and, on `render/image`, Storage's transformation in the core's parameters (`format` absent: the best format the
 * client accepts, as Storage converts by default; `origin`: the file's own). `resize` is the core's fit, given
 * beside the request (fitOf).
 */
function coreRequest(c: Context<AppEnv>, transform: Record<string, string> | null): Request {
  const url = new URL(c.req.url);
  const target = new URL(url.origin + url.pathname);
  if (url.searchParams.has("download")) target.searchParams.set("download", "true");
  if (transform) {
    for (const [name, core] of Object.entries(TRANSFORM)) {
      const value = transform[name];
      if (value) target.searchParams.set(core, value);
    }
    const format = transform.format ?? "auto";
    if (format !== "origin") target.searchParams.set("f", format);
  }
  return new Request(target, { method: c.req.method, headers: c.req.raw.headers });
}

/**
 * The query's transformation parameters (what storage-js appends), over a signed token's own. A `resize` Storage
 * does not know is its schema's 400 (`querystring/resize must be equal to one of the allowed values`).
 */
export function transformOf(query: URLSearchParams, signed?: Record<string, string>): Record<string, string> {
  const asked: Record<string, string> = {};
  for (const name of ["width", "height", "quality", "format", "resize"]) {
    const value = query.get(name);
    if (value) asked[name] = value;
  }
  if (asked.resize !== undefined && !(FITS as readonly string[]).includes(asked.resize)) {
    throw invalidRequest("querystring/resize must be equal to one of the allowed values");
  }
  return { ...asked, ...signed };
}

/**
 * Storage's `resize` as the core's fit: the same words. Absent, `cover`, as Storage's renderer defaults (imgproxy's
 * `fill`: docs/decisions.md, "Issue 43: resize cover and fill").
 */
const fitOf = (transform: Record<string, string> | null): Fit | undefined =>
  transform ? ((transform.resize as Fit | undefined) ?? "cover") : undefined;

export async function serveObject(
  c: Context<AppEnv>,
  ref: ObjectRef,
  access: Access,
  transform: Record<string, string> | null,
): Promise<Response> {
  const { deps } = c.var;
  const caller = callerOf(c);
  const found = await findObject(deps.shards, ref.bucketId, ref.path);
  if (!found?.file.isUploaded) throw noSuchKey();
  const request = coreRequest(c, transform);
  const { id } = found.file;
  const image = { fit: fitOf(transform) };
  if (access === "authenticated")
    return deliverFile(deps, request, id, await readPolicyFor(deps, caller, id), image);
  if (access === "public") return deliverFile(deps, request, id, await publicReadPolicy(deps, id), image);
  // The token is the credential (and the cache key): the answer is the same for whoever holds it.
  return deliverFile(
    deps,
    request,
    id,
    () => ({ cacheControl: `max-age=${access.secondsLeft}`, shared: true }),
    image,
  );
}
