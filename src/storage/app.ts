import { eq } from "drizzle-orm";
import { type Context, Hono } from "hono";
import { cors } from "hono/cors";
import pkg from "../../package.json";
import type { AppEnv } from "../app-env";
import { files } from "../db/schema";
import { logError } from "../middleware/context";
import { allows, identifyCaller } from "./access";
import { downloadFile } from "./download";
import { fileNotFound, internalError, notAuthorized, StorageError } from "./errors";
import { findFileWithBucket, objectKey } from "./records";
import { uploadFiles } from "./upload";

/** Answers a storage failure in the contract's shape; HEAD gets the headers only. */
function errorResponse(c: Context<AppEnv>, caught: unknown): Response {
  const error = caught instanceof StorageError ? caught : internalError(String(caught));
  if (error.status >= 500 || !(caught instanceof StorageError)) {
    logError(c.var.requestId, "storage", error.reason ?? caught);
  }
  const headers = new Headers({ "X-Error": error.message, "Cache-Control": "no-store", ...error.headers });
  if (c.req.method === "HEAD") return new Response(null, { status: error.status, headers });
  headers.set("Content-Type", "application/json");
  const body = {
    error: { message: error.message, ...(error.data === undefined ? {} : { data: error.data }) },
  };
  return new Response(JSON.stringify({ ...body, ...error.extra }), { status: error.status, headers });
}

/**
 * The storage API (storage contract §2), mounted under `STORAGE_API_PREFIX`. Built so far: uploads, downloads with
 * conditional requests and ranges, deletes, version and health. Not yet: replace, presigned URLs, image
 * transformation, the `ops/*` and bucket endpoints (the storage issue stays open for them).
 */
export function createStorageApp(corsOrigins: string[]): Hono<AppEnv> {
  const storage = new Hono<AppEnv>();
  storage.use(
    cors({
      origin: corsOrigins,
      credentials: true,
      maxAge: 600,
      exposeHeaders: [
        "ETag",
        "Content-Range",
        "Content-Disposition",
        "Last-Modified",
        "X-Error",
        "X-Request-Id",
      ],
    }),
  );
  storage.onError((caught, c) => errorResponse(c, caught));
  storage
    .get("/version", (c) => c.json({ buildVersion: pkg.version }))
    .get("/healthz", (c) => c.json("OK"))
    .post("/files", async (c) => {
      const processedFiles = await uploadFiles(c.var.deps, c.req.raw, await identifyCaller(c));
      return c.json({ processedFiles }, 201);
    })
    .on(["GET", "HEAD"], "/files/:id", async (c) =>
      downloadFile(c.var.deps, c.req.raw, c.req.param("id"), await identifyCaller(c)),
    )
    .delete("/files/:id", async (c) => {
      const { deps } = c.var;
      const caller = await identifyCaller(c);
      const found = await findFileWithBucket(deps.db, c.req.param("id"));
      // Deleting is a write: a file the caller may not read is not revealed, one they may read but not delete is 403.
      if (!found || !allows(found.bucket.rules.read, caller, found.file.uploadedByUserId))
        throw fileNotFound();
      if (!allows(found.bucket.rules.delete, caller, found.file.uploadedByUserId)) throw notAuthorized();
      await deps.db.delete(files).where(eq(files.id, found.file.id));
      await deps.env.FILES.delete(objectKey(found.file));
      return c.body(null, 204);
    });
  return storage;
}
