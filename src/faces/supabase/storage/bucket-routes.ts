import { type Context, Hono } from "hono";
import { z } from "zod";
import { buckets } from "../../../db/schema";
import type { AppEnv } from "../../../http/app-env";
import {
  BUCKET_DEFAULTS,
  createBucket,
  deleteBucket,
  emptyBucket,
  findBucket,
  StorageError,
  updateBucket,
} from "../../../storage";
import { callerOf } from "./caller";
import { invalidRequest, noSuchBucket, rowSecurity, StorageApiError } from "./errors";
import { checkBucketId, jsonOf } from "./request";
import { toStorageBucket } from "./wire";

/**
 * Storage's bucket administration (storage-js `listBuckets`, `getBucket`, `createBucket`, `updateBucket`,
 * `emptyBucket`, `deleteBucket`): the service role's alone. Supabase leaves `storage.buckets` to RLS, which denies a
 * client by default: a client lists none, finds none and changes none.
 */

/** `file_size_limit`: bytes, or Storage's `<n>(b|kb|mb|gb)` in decimal units; null is the service's default. */
const sizeLimit = z
  .union([
    z.number().int().min(1).max(5_000_000_000),
    z.string().regex(/^[0-9]+(\.[0-9]+)?(gb|mb|kb|b)$/i, "must be a size such as 20MB"),
    z.null(),
  ])
  .optional()
  .transform((value) => {
    if (typeof value !== "string") return value;
    const [, number, unit] = /^([0-9.]+)([a-z]+)$/i.exec(value)!;
    const scale = { gb: 1e9, mb: 1e6, kb: 1e3, b: 1 }[unit!.toLowerCase() as "gb" | "mb" | "kb" | "b"];
    return Math.round(Number(Number(number).toPrecision(3)) * scale);
  });

const settings = z.object({
  public: z.boolean().optional(),
  file_size_limit: sizeLimit,
  allowed_mime_types: z.array(z.string()).max(100).nullable().optional(),
});

/** Storage's settings as the core's: a size limit over 5 GB, or a MIME pattern it does not take, is Storage's 400. */
function coreSettings(body: z.infer<typeof settings>) {
  const limit = body.file_size_limit;
  if (limit !== undefined && limit !== null && limit > 5_000_000_000) {
    throw new StorageApiError(400, "InvalidRequest", "Invalid Input", "Invalid file size limit");
  }
  return {
    ...(limit === undefined ? {} : { maxUploadFileSize: limit ?? BUCKET_DEFAULTS.maxUploadFileSize }),
    ...(body.allowed_mime_types === undefined ? {} : { allowedMimeTypes: body.allowed_mime_types ?? [] }),
  };
}

/** The core's own 400 about a setting, in Storage's words. */
async function settled<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof StorageError && error.status === 400) throw invalidRequest(error.message);
    throw error;
  }
}

const adminOnly = (c: Context<AppEnv>) => {
  if (callerOf(c).kind !== "admin") throw rowSecurity();
};

export const bucketRoutes = new Hono<AppEnv>()
  .get("/bucket", async (c) => {
    if (callerOf(c).kind !== "admin") return c.json([]);
    const all = await c.var.deps.shards.home.select().from(buckets).orderBy(buckets.id).all();
    return c.json(all.map(toStorageBucket));
  })
  .get("/bucket/:id", async (c) => {
    const bucket =
      callerOf(c).kind === "admin" ? await findBucket(c.var.deps.shards.home, c.req.param("id")) : null;
    if (!bucket) throw noSuchBucket();
    return c.json(toStorageBucket(bucket));
  })
  .post("/bucket", async (c) => {
    adminOnly(c);
    const body = await jsonOf(c, settings.extend({ id: z.string().optional(), name: z.string().optional() }));
    const id = checkBucketId(body.id ?? body.name ?? "");
    // Supabase's buckets start closed to clients (RLS on, no policy): here every client rule is `none` until one is
    // set (the admin API or the console); a public bucket's files are readable by anyone, as Storage serves them.
    const rules = {
      upload: "none",
      read: body.public ? "public" : "none",
      update: "none",
      delete: "none",
    } as const;
    await settled(
      createBucket(
        c.var.deps.shards.home,
        { id, ...coreSettings(body), minUploadFileSize: 0, rules: { ...rules } },
        c.var.deps.now(),
      ),
    );
    return c.json({ name: id });
  })
  .put("/bucket/:id", async (c) => {
    adminOnly(c);
    const body = await jsonOf(c, settings.extend({ id: z.string().optional(), name: z.string().optional() }));
    const current = await findBucket(c.var.deps.shards.home, c.req.param("id"));
    if (!current) throw noSuchBucket();
    // `public: false` closes reads that were public; any other read rule (set through the admin API) stays.
    const read =
      body.public === true
        ? "public"
        : body.public === false && current.rules.read === "public"
          ? "none"
          : current.rules.read;
    await settled(
      updateBucket(
        c.var.deps.shards.home,
        current.id,
        { ...coreSettings(body), rules: { ...current.rules, read } },
        c.var.deps.now(),
      ),
    );
    return c.json({ message: "Successfully updated" });
  })
  .post("/bucket/:id/empty", async (c) => {
    adminOnly(c);
    await emptyBucket(c.var.deps, c.req.param("id"));
    return c.json({ message: "Successfully emptied" });
  })
  .delete("/bucket/:id", async (c) => {
    adminOnly(c);
    try {
      await deleteBucket(c.var.deps.shards, c.req.param("id"));
    } catch (error) {
      if (error instanceof StorageError && error.message === "bucket is not empty") {
        throw new StorageApiError(
          409,
          "ResourceNotEmpty",
          "ResourceNotEmpty",
          "The bucket you tried to delete is not empty",
        );
      }
      if (error instanceof StorageError && error.status === 400) throw invalidRequest(error.message);
      throw error;
    }
    return c.json({ message: "Successfully deleted" });
  });
