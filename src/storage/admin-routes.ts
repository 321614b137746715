import { zValidator } from "@hono/zod-validator";
import { type Context, Hono, type Next } from "hono";
import { createMiddleware } from "hono/factory";
import type { ZodType } from "zod";
import { buckets } from "../db/schema";
import type { AppEnv } from "../http/app-env";
import { documented } from "../http/documented";
import { notJsonBodyReason } from "../http/validation";
import { identifyCaller } from "./access";
import {
  createBucket,
  createBucketSchema,
  deleteBucket,
  toWireBucket,
  updateBucket,
  updateBucketSchema,
} from "./buckets";
import { badRequest, bucketNotFound, notAuthorized } from "./errors";
import { deleteBrokenMetadata, deleteOrphans, listBrokenMetadata, listOrphans, notUploaded } from "./ops";
import { findBucket } from "./records";

/** The admin secret or nothing (storage contract §2: buckets and `ops/*`). */
const requireAdmin = createMiddleware<AppEnv>(async (c, next) => {
  if ((await identifyCaller(c)).kind !== "admin") throw notAuthorized();
  await next();
});

/**
 * A JSON body validated by `schema`; bad input is a 400 in the storage error shape. A body that is not JSON (another
 * Content-Type) is refused rather than read as no body; malformed JSON is answered by the app's error handler.
 */
const jsonBody = <T extends ZodType>(schema: T) => {
  const validate = zValidator("json", schema, (result) => {
    if (!result.success) {
      const issue = result.error.issues[0];
      throw badRequest(issue ? `${issue.path.join(".") || "body"}: ${issue.message}` : "invalid body");
    }
  });
  const guarded = (async (c: Context<AppEnv>, next: Next) => {
    const reason = await notJsonBodyReason(c);
    if (reason) throw badRequest(reason);
    return validate(c as never, next);
  }) as unknown as typeof validate;
  return documented(guarded, { target: "json", schema });
};

/** Bucket administration (improvement) and the maintenance endpoints. */
export const adminRoutes = new Hono<AppEnv>()
  .use("/buckets/*", requireAdmin)
  .use("/buckets", requireAdmin)
  .use("/ops/*", requireAdmin)
  .get("/buckets", async (c) => {
    const rows = await c.var.deps.db.select().from(buckets).all();
    return c.json({ buckets: rows.map(toWireBucket) });
  })
  .post("/buckets", jsonBody(createBucketSchema), async (c) =>
    c.json(await createBucket(c.var.deps.db, c.req.valid("json"), c.var.deps.now()), 201),
  )
  .get("/buckets/:id", async (c) => {
    const bucket = await findBucket(c.var.deps.db, c.req.param("id"));
    if (!bucket) throw bucketNotFound();
    return c.json(toWireBucket(bucket));
  })
  .patch("/buckets/:id", jsonBody(updateBucketSchema), async (c) =>
    c.json(await updateBucket(c.var.deps.db, c.req.param("id"), c.req.valid("json"), c.var.deps.now())),
  )
  .delete("/buckets/:id", async (c) => {
    await deleteBucket(c.var.deps.db, c.req.param("id"));
    return c.body(null, 204);
  })
  .post("/ops/list-broken-metadata", async (c) =>
    c.json(await listBrokenMetadata(c.var.deps.db, c.env.FILES)),
  )
  .post("/ops/delete-broken-metadata", async (c) =>
    c.json(await deleteBrokenMetadata(c.var.deps.db, c.env.FILES)),
  )
  .post("/ops/list-not-uploaded", async (c) => c.json(await notUploaded(c.var.deps.db)))
  .post("/ops/list-orphans", async (c) => c.json(await listOrphans(c.var.deps.db, c.env.FILES)))
  .post("/ops/delete-orphans", async (c) => c.json(await deleteOrphans(c.var.deps.db, c.env.FILES)));
