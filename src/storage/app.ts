import { eq } from "drizzle-orm";
import { type Context, Hono } from "hono";
import { cors } from "hono/cors";
import pkg from "../../package.json";
import type { AppEnv } from "../app-env";
import { files } from "../db/schema";
import { logError } from "../middleware/context";
import { allows, identifyCaller } from "./access";
import { downloadFile, serveFile } from "./download";
import { fileNotFound, internalError, notAuthorized, StorageError } from "./errors";
import { presignedUrl, verifyPresigned } from "./presign";
import { findFileWithBucket, objectKey } from "./records";
import { replaceFile } from "./replace";
import { uploadFiles } from "./upload";

const presignedDisabled = () =>
  new StorageError(403, "presigned URLs are not enabled on the bucket where this file is located in");

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
 * conditional requests and ranges, replace, delete, presigned URLs, version and health. Not yet: image
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
    .put("/files/:id", async (c) =>
      c.json(await replaceFile(c.var.deps, c.req.raw, c.req.param("id"), await identifyCaller(c))),
    )
    .delete("/files/:id", async (c) => {
      const { deps } = c.var;
      const found = await findFileWithBucket(deps.db, c.req.param("id"));
      if (!found) throw fileNotFound();
      // A write path: the contract answers 403 here, where read paths hide the file behind a 404.
      if (!allows(found.bucket.rules.delete, await identifyCaller(c), found.file.uploadedByUserId)) {
        throw notAuthorized();
      }
      await deps.db.delete(files).where(eq(files.id, found.file.id));
      await deps.env.FILES.delete(objectKey(found.file));
      return c.body(null, 204);
    })
    .get("/files/:id/presignedurl", async (c) => {
      const { deps } = c.var;
      const found = await findFileWithBucket(deps.db, c.req.param("id"));
      if (!found || !allows(found.bucket.rules.read, await identifyCaller(c), found.file.uploadedByUserId)) {
        throw fileNotFound();
      }
      if (!found.bucket.presignedUrlsEnabled) throw presignedDisabled();
      return c.json(
        await presignedUrl(deps.config, found.file.id, found.bucket.downloadExpiration, deps.now()),
      );
    })
    .on(["GET", "HEAD"], "/files/:id/presignedurl/contents", async (c) => {
      const { deps } = c.var;
      const id = c.req.param("id");
      // The signature is checked first: without a valid one, nothing about the file is revealed.
      const secondsLeft = await verifyPresigned(deps.config, id, new URL(c.req.url).searchParams, deps.now());
      const found = await findFileWithBucket(deps.db, id);
      if (!found) throw fileNotFound();
      if (!found.bucket.presignedUrlsEnabled) throw presignedDisabled();
      return serveFile(deps, c.req.raw, found.file, `max-age=${secondsLeft}`);
    });
  return storage;
}
