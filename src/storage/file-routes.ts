import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { files } from "../db/schema";
import type { AppEnv } from "../http/app-env";
import { allows, identifyCaller } from "./access";
import { deliverFile, readPolicy } from "./download";
import { fileNotFound, notAuthorized, StorageError } from "./errors";
import { deleteVariants } from "./images/variants";
import { presignedUrl, verifyPresigned } from "./presign";
import { forgetFile } from "./record-cache";
import { findFileWithBucket } from "./records";
import { replaceFile } from "./replace";
import { uploadFiles } from "./upload";

const presignedDisabled = () =>
  new StorageError(403, "presigned URLs are not enabled on the bucket where this file is located in");

/** The file operations of storage contract §2. */
export const fileRoutes = new Hono<AppEnv>()
  .post("/files", async (c) => {
    const processedFiles = await uploadFiles(c.var.deps, c.req.raw, await identifyCaller(c));
    return c.json({ processedFiles }, 201);
  })
  .on(["GET", "HEAD"], "/files/:id", async (c) =>
    deliverFile(c.var.deps, c.req.raw, c.req.param("id"), readPolicy(await identifyCaller(c))),
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
    // The record goes first and names the key it pointed at then: if a replace landed meanwhile, that is its new
    // key (the replace removes the old one); a replace still uploading finds no record and removes its own bytes.
    const deleted = await deps.db
      .delete(files)
      .where(eq(files.id, found.file.id))
      .returning({ objectKey: files.objectKey })
      .get();
    forgetFile(found.file.id);
    if (!deleted) throw fileNotFound();
    await deps.env.FILES.delete(deleted.objectKey);
    await deleteVariants(deps.env.FILES, found.file.id);
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
    return deliverFile(deps, c.req.raw, id, ({ bucket }) => {
      if (!bucket.presignedUrlsEnabled) throw presignedDisabled();
      // The URL is the credential (and the cache key): its answer is the same for whoever holds it.
      return { cacheControl: `max-age=${secondsLeft}`, shared: true };
    });
  });
