import { type Context, Hono } from "hono";
import type { AppEnv } from "../../../http/app-env";
import { metadataSchema } from "../../../lib/json-metadata";
import { readWithin } from "../../../lib/refused-body";
import { appendResumable, cancelResumable, findResumable, MAX_CHUNK, startResumable } from "../../../storage";
import { callerOf } from "./caller";
import { StorageApiError } from "./errors";
import { checkBucketId, checkPath } from "./request";

/**
 * Resumable uploads over TUS 1.0.0 (`/upload/resumable`, what Supabase recommends above 6 MB; tus-js-client as
 * Supabase's guide sets it up): the core protocol and the `creation` and `termination` extensions, over the core's
 * resumable uploads (storage/resumable.ts). A documented subset: every request but the last carries the same number
 * of bytes (the client's `chunkSize`, at least 5 MiB, at most 64 MiB), as R2's multipart parts must; no
 * `Upload-Defer-Length`, no `creation-with-upload`, no checksums.
 */

const TUS = "1.0.0";

const tusHeaders = { "Tus-Resumable": TUS, "Cache-Control": "no-store" };

/** TUS answers with the status itself (clients act on it), in Storage's body. */
const tusError = (status: 400 | 403 | 404 | 409 | 412 | 413 | 415, message: string) =>
  new StorageApiError(status, status === 409 ? "InvalidRequest" : "TusError", "TusError", message, status);

/** `Upload-Metadata`: `key base64value` pairs, comma-separated (TUS 1.0.0, "Upload-Metadata"). */
function uploadMetadata(header: string): Map<string, string> {
  const entries = new Map<string, string>();
  for (const pair of header.split(",")) {
    const [key, value = ""] = pair.trim().split(" ");
    if (!key) continue;
    entries.set(key, Buffer.from(value, "base64").toString("utf8"));
  }
  return entries;
}

/** A non-negative integer header, or a 400 naming it. */
function integerHeader(c: Context<AppEnv>, name: string): number {
  const value = c.req.header(name) ?? "";
  if (!/^\d{1,15}$/.test(value)) throw tusError(400, `${name} must be a non-negative integer`);
  return Number(value);
}

function requireTus(c: Context<AppEnv>): void {
  if (c.req.header("tus-resumable") !== TUS) throw tusError(412, `Tus-Resumable must be ${TUS}`);
}

/** The request's bytes, at most what the upload can take (`limit`), read whole (one part). */
async function chunkOf(c: Context<AppEnv>, limit: number): Promise<Uint8Array> {
  if (!c.req.raw.body) return new Uint8Array(0);
  // Past the limit, the rest is read past before the 413 goes (lib/refused-body.ts: a cancel loses the connection).
  const bytes = await readWithin(c.req.raw.body, limit);
  if (bytes === "too-large") throw tusError(413, `this request may carry at most ${limit} bytes`);
  return bytes;
}

function metadataOf(text: string | undefined): Record<string, unknown> | null {
  if (!text) return null;
  try {
    const parsed = metadataSchema.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
  } catch {
    // answered below
  }
  throw tusError(400, "metadata must be a JSON object");
}

export const resumableRoutes = new Hono<AppEnv>()
  .options(
    "/upload/resumable",
    () =>
      new Response(null, {
        status: 204,
        headers: {
          ...tusHeaders,
          "Tus-Version": TUS,
          "Tus-Extension": "creation,termination",
          "Tus-Max-Size": String(5_000_000_000),
        },
      }),
  )
  .post("/upload/resumable", async (c) => {
    requireTus(c);
    if (c.req.header("upload-defer-length")) throw tusError(400, "Upload-Defer-Length is not supported");
    const length = integerHeader(c, "upload-length");
    const meta = uploadMetadata(c.req.header("upload-metadata") ?? "");
    const row = await startResumable(c.var.deps, {
      bucketId: checkBucketId(meta.get("bucketName") ?? ""),
      path: checkPath(meta.get("objectName") ?? ""),
      caller: callerOf(c),
      upsert: c.req.header("x-upsert") === "true",
      length,
      contentType: meta.get("contentType") || "application/octet-stream",
      metadata: metadataOf(meta.get("metadata")),
    });
    const location = `${new URL(c.req.url).origin}${c.req.path}/${row.id}`;
    return new Response(null, {
      status: 201,
      headers: { ...tusHeaders, Location: location, "Upload-Offset": "0" },
    });
  })
  // Hono answers a HEAD with its GET route (the body dropped): TUS's HEAD is this route.
  .get("/upload/resumable/:id", async (c) => {
    requireTus(c);
    const row = await findResumable(c.var.deps, c.req.param("id"), callerOf(c));
    return new Response(null, {
      status: 200,
      headers: { ...tusHeaders, "Upload-Offset": String(row.offset), "Upload-Length": String(row.length) },
    });
  })
  .patch("/upload/resumable/:id", async (c) => {
    requireTus(c);
    if (c.req.header("content-type") !== "application/offset+octet-stream") {
      throw tusError(415, "Content-Type must be application/offset+octet-stream");
    }
    const offset = integerHeader(c, "upload-offset");
    const caller = callerOf(c);
    const row = await findResumable(c.var.deps, c.req.param("id"), caller);
    if (offset !== row.offset) throw tusError(409, `the upload is at offset ${row.offset}`);
    const bytes = await chunkOf(c, Math.min(MAX_CHUNK, row.length - row.offset));
    const done = await appendResumable(c.var.deps, row, caller, offset, bytes);
    return new Response(null, {
      status: 204,
      headers: { ...tusHeaders, "Upload-Offset": String(done.offset) },
    });
  })
  .delete("/upload/resumable/:id", async (c) => {
    requireTus(c);
    await cancelResumable(c.var.deps, c.req.param("id"), callerOf(c));
    return new Response(null, { status: 204, headers: tusHeaders });
  });
