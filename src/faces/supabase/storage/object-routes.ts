import { type Context, Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../../http/app-env";
import { metadataSchema } from "../../../lib/json-metadata";
import {
  copyObject,
  findBucket,
  listObjects,
  listScope,
  MAX_LIST_WINDOW,
  moveObject,
  putObject,
  readableObject,
  removeObjects,
} from "../../../storage";
import { callerOf } from "./caller";
import { invalidRequest, noSuchBucket, rowSecurity } from "./errors";
import { checkBucketId, checkPath, jsonOf, objectRef, withUploadBody } from "./request";
import { serveObject } from "./serve";
import { toListFile, toListFolder, toObjectInfo, toStorageObject } from "./wire";

/**
 * Storage's object routes (storage-js `upload`, `update`, upsert, `download`, `info`/`exists`, `list`, `move`,
 * `copy`, `remove`): parsed here, done by the core (storage/object-writes.ts, object-paths.ts), shaped as Storage's.
 */

type Ctx = Context<AppEnv>;

const metadataField = metadataSchema.optional();

const moveBody = z.object({
  bucketId: z.string(),
  sourceKey: z.string(),
  destinationKey: z.string(),
  destinationBucket: z.string().nullish(),
});

const copyBody = moveBody.extend({ copyMetadata: z.boolean().optional(), metadata: metadataField });

const listBody = z.object({
  prefix: z.string().max(1024).default(""),
  limit: z.number().int().min(1).max(1000).default(100),
  offset: z.number().int().min(0).default(0),
  sortBy: z
    .object({
      column: z.enum(["name", "created_at", "updated_at", "last_accessed_at"]).default("name"),
      order: z.enum(["asc", "desc"]).default("asc"),
    })
    .default({ column: "name", order: "asc" }),
  search: z.string().max(1024).default(""),
});

/** upload (`x-upsert`), upsert and update: one file from the body, answered as Storage's `{Id, Key}`. */
async function put(c: Ctx, mode: "upload" | "upsert" | "update") {
  const { bucketId, path } = objectRef(c, "/object/");
  const file = await withUploadBody(c, path.slice(path.lastIndexOf("/") + 1), (body, metadata) =>
    putObject(c.var.deps, { bucketId, path, caller: callerOf(c), mode, body, metadata }),
  );
  return c.json({ Id: file.id, Key: `${bucketId}/${path}` });
}

/** `info` (and `exists`, which asks it): what the caller may read, or Storage's not found. */
async function info(c: Ctx, head: string) {
  const { bucketId, path } = objectRef(c, head);
  const { file, bucket } = await readableObject(c.var.deps, bucketId, path, callerOf(c));
  return c.json(toObjectInfo(file, bucket.cacheControl));
}

const source = (body: z.infer<typeof moveBody>) => ({
  bucketId: checkBucketId(body.bucketId),
  from: checkPath(body.sourceKey),
  toBucketId: checkBucketId(body.destinationBucket ?? body.bucketId),
  to: checkPath(body.destinationKey),
});

export const objectRoutes = new Hono<AppEnv>()
  .post("/object/list/:bucket", async (c) => {
    const body = await jsonOf(c, listBody);
    if (body.offset + body.limit > MAX_LIST_WINDOW) {
      throw invalidRequest(`offset + limit must not exceed ${MAX_LIST_WINDOW}`);
    }
    const bucket = await findBucket(c.var.deps.shards.home, checkBucketId(c.req.param("bucket")));
    if (!bucket) throw noSuchBucket();
    const scope = await listScope(c.var.deps, bucket, callerOf(c));
    if (!scope) return c.json([]);
    const entries = await listObjects(c.var.deps.shards, bucket.id, { ...body, ...scope });
    return c.json(
      entries.map((entry) =>
        "folder" in entry
          ? toListFolder(entry.folder)
          : toListFile(entry.file, entry.name, bucket.cacheControl),
      ),
    );
  })
  .post("/object/move", async (c) => {
    const body = await jsonOf(c, moveBody);
    await moveObject(c.var.deps, { ...source(body), caller: callerOf(c) });
    return c.json({ message: "Successfully moved" });
  })
  .post("/object/copy", async (c) => {
    const body = await jsonOf(c, copyBody);
    const target = source(body);
    const file = await copyObject(c.var.deps, {
      ...target,
      caller: callerOf(c),
      upsert: c.req.header("x-upsert") === "true",
      metadata: body.copyMetadata === false ? (body.metadata ?? {}) : undefined,
    });
    return c.json({ Id: file.id, Key: `${target.toBucketId}/${target.to}` });
  })
  .get("/object/info/authenticated/:bucket/*", (c) => info(c, "/object/info/authenticated/"))
  .get("/object/info/:bucket/*", (c) => info(c, "/object/info/"))
  .on(["GET", "HEAD"], "/object/authenticated/:bucket/*", (c) =>
    serveObject(c, objectRef(c, "/object/authenticated/"), "authenticated", null),
  )
  .delete("/object/:bucket", async (c) => {
    const body = await jsonOf(c, z.object({ prefixes: z.array(z.string()).min(1).max(1000) }));
    const bucketId = checkBucketId(c.req.param("bucket"));
    const bucket = await findBucket(c.var.deps.shards.home, bucketId);
    if (!bucket) throw noSuchBucket();
    const removed = await removeObjects(c.var.deps, bucketId, body.prefixes.map(checkPath), callerOf(c));
    return c.json(removed.map((file) => toStorageObject(file, bucket.cacheControl)));
  })
  .delete("/object/:bucket/*", async (c) => {
    const { bucketId, path } = objectRef(c, "/object/");
    const removed = await removeObjects(c.var.deps, bucketId, [path], callerOf(c));
    if (removed.length === 0) {
      // Not there, or not the caller's to see: not found. Seen but not theirs to delete: Storage's RLS refusal.
      await readableObject(c.var.deps, bucketId, path, callerOf(c));
      throw rowSecurity();
    }
    return c.json({ message: "Successfully deleted" });
  })
  .post("/object/:bucket/*", (c) => put(c, c.req.header("x-upsert") === "true" ? "upsert" : "upload"))
  .put("/object/:bucket/*", (c) => put(c, "update"))
  .on(["GET", "HEAD"], "/object/:bucket/*", (c) =>
    serveObject(c, objectRef(c, "/object/"), "authenticated", null),
  );
