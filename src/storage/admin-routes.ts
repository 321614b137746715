import { zValidator } from "@hono/zod-validator";
import { type Context, Hono, type Next } from "hono";
import { createMiddleware } from "hono/factory";
import type { ZodType } from "zod";
import { z } from "zod";
import { buckets } from "../db/schema";
import type { AppEnv } from "../http/app-env";
import { boundedBody } from "../http/body-limit";
import { documented, operation } from "../http/documented";
import { MAX_JSON_BODY_BYTES, notJsonBodyReason } from "../http/validation";
import { identifyCaller } from "./access";
import {
  createBucket,
  createBucketSchema,
  deleteBucket,
  toWireBucket,
  updateBucket,
  updateBucketSchema,
  wireBucketSchema,
} from "./buckets";
import { badRequest, bucketNotFound, notAuthorized, StorageError } from "./errors";
import { deleteBrokenMetadata, deleteOrphans, listBrokenMetadata, listOrphans, notUploaded } from "./ops";
import { findBucket } from "./records";

/** The admin secret or nothing (storage contract §2: buckets and `ops/*`). */
const requireAdmin = createMiddleware<AppEnv>(async (c, next) => {
  if ((await identifyCaller(c)).kind !== "admin") throw notAuthorized();
  await next();
});

/**
 * A JSON body validated by `schema`; bad input is a 400 in the storage error shape. A body that is not JSON (another
 * Content-Type) is refused rather than read as no body; malformed JSON is answered by the app's error handler. A
 * bucket's settings are small: a body past the API's 64 KB is a 413, not megabytes held in the isolate.
 */
const bounded = boundedBody<AppEnv>(
  MAX_JSON_BODY_BYTES,
  () => new StorageError(413, `request body exceeds ${MAX_JSON_BODY_BYTES} bytes`),
);
const jsonBody = <T extends ZodType>(schema: T) => {
  const validate = zValidator("json", schema, (result) => {
    if (!result.success) {
      const issue = result.error.issues[0];
      throw badRequest(issue ? `${issue.path.join(".") || "body"}: ${issue.message}` : "invalid body");
    }
  });
  // The bound first: it reads the request's own body, which the type check below may read (and so use) itself.
  const guarded = (async (c: Context<AppEnv>, next: Next) =>
    bounded(c, async () => {
      const reason = await notJsonBodyReason(c);
      if (reason) throw badRequest(reason);
      return validate(c as never, next);
    })) as unknown as typeof validate;
  return documented(guarded, { target: "json", schema });
};

const ADMIN = "Admin secret only (`x-hasura-admin-secret`); anything else: 403.";
const opsFiles = z.object({
  metadata: z.array(
    z.object({ id: z.string(), name: z.string(), bucketId: z.string(), isUploaded: z.boolean() }),
  ),
});

/** Bucket administration (improvement) and the maintenance endpoints. */
export const adminRoutes = new Hono<AppEnv>()
  .use("/buckets/*", requireAdmin)
  .use("/buckets", requireAdmin)
  .use("/ops/*", requireAdmin)
  .get(
    "/buckets",
    operation({
      summary: "List buckets",
      description: `Every bucket with its settings and access rules. ${ADMIN}`,
      security: "admin-secret",
      answers: {
        200: { description: "The buckets.", schema: z.object({ buckets: z.array(wireBucketSchema) }) },
      },
    }),
    async (c) => {
      const rows = await c.var.deps.shards.home.select().from(buckets).all();
      return c.json({ buckets: rows.map(toWireBucket) });
    },
  )
  .post(
    "/buckets",
    operation({
      summary: "Create a bucket",
      description: `A bucket with its sizes, MIME types, cache control, presigned-URL settings and rules (\`public\`, \`authenticated\`, \`owner\`, or a list of roles); unset settings take the default bucket's. 409 for an existing id. ${ADMIN}`,
      security: "admin-secret",
      answers: { 201: { description: "The bucket.", schema: wireBucketSchema } },
    }),
    jsonBody(createBucketSchema),
    async (c) =>
      c.json(await createBucket(c.var.deps.shards.home, c.req.valid("json"), c.var.deps.now()), 201),
  )
  .get(
    "/buckets/:id",
    operation({
      summary: "Get a bucket",
      description: `404 for an unknown id. ${ADMIN}`,
      security: "admin-secret",
      answers: { 200: { description: "The bucket.", schema: wireBucketSchema } },
    }),
    async (c) => {
      const bucket = await findBucket(c.var.deps.shards.home, c.req.param("id"));
      if (!bucket) throw bucketNotFound();
      return c.json(toWireBucket(bucket));
    },
  )
  .patch(
    "/buckets/:id",
    operation({
      summary: "Change a bucket",
      description: `Any of its settings. ${ADMIN}`,
      security: "admin-secret",
      answers: { 200: { description: "The bucket as it is now.", schema: wireBucketSchema } },
    }),
    jsonBody(updateBucketSchema),
    async (c) =>
      c.json(
        await updateBucket(c.var.deps.shards.home, c.req.param("id"), c.req.valid("json"), c.var.deps.now()),
      ),
  )
  .delete(
    "/buckets/:id",
    operation({
      summary: "Delete a bucket",
      description: `Only an empty one (400 while it holds files); the default bucket cannot go (400). ${ADMIN}`,
      security: "admin-secret",
      answers: { 204: { description: "Deleted.", media: "empty" } },
    }),
    async (c) => {
      await deleteBucket(c.var.deps.shards, c.req.param("id"));
      return c.body(null, 204);
    },
  )
  .post(
    "/ops/list-broken-metadata",
    operation({
      summary: "Records whose bytes are missing",
      description: `Walks the whole bucket and table: maintenance. ${ADMIN}`,
      security: "admin-secret",
      answers: { 200: { description: "The records.", schema: opsFiles } },
    }),
    async (c) => c.json(await listBrokenMetadata(c.var.deps.shards, c.env.FILES)),
  )
  .post(
    "/ops/delete-broken-metadata",
    operation({
      summary: "Delete records whose bytes are missing",
      description: `${ADMIN}`,
      security: "admin-secret",
      answers: { 200: { description: "The records deleted.", schema: opsFiles } },
    }),
    async (c) => c.json(await deleteBrokenMetadata(c.var.deps.shards, c.env.FILES)),
  )
  .post(
    "/ops/list-not-uploaded",
    operation({
      summary: "Records never completed",
      description: `Uploads that did not finish (the daily cron removes them after a day). ${ADMIN}`,
      security: "admin-secret",
      answers: { 200: { description: "The records.", schema: opsFiles } },
    }),
    async (c) => c.json(await notUploaded(c.var.deps.shards)),
  )
  .post(
    "/ops/list-orphans",
    operation({
      summary: "Objects without a record",
      description: `R2 objects no record names (what a crash between the write and the insert leaves). ${ADMIN}`,
      security: "admin-secret",
      answers: { 200: { description: "Their keys.", schema: z.object({ files: z.array(z.string()) }) } },
    }),
    async (c) => c.json(await listOrphans(c.var.deps.shards, c.env.FILES)),
  )
  .post(
    "/ops/delete-orphans",
    operation({
      summary: "Delete objects without a record",
      description: `${ADMIN}`,
      security: "admin-secret",
      answers: {
        200: { description: "The keys deleted.", schema: z.object({ files: z.array(z.string()) }) },
      },
    }),
    async (c) => c.json(await deleteOrphans(c.var.deps.shards, c.env.FILES)),
  );
