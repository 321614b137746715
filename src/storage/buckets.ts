import { count, eq } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";
import { type BucketRow, buckets, files } from "../db/schema";
import { eachShard, type Shards } from "../db/shards";
import { badRequest, bucketNotFound, StorageError } from "./errors";
import { forgetBucket } from "./record-cache";

/** Bucket administration (storage contract §2, improvement): settings and access rules, admin secret only. */

const rule = z.union([
  z.enum(["public", "authenticated", "owner", "none"]),
  z.array(z.string().min(1).max(100)).min(1).max(50),
]);

/** Every setting of a bucket; all optional on create (the defaults below apply) and on update. */
export const updateBucketSchema = z
  .strictObject({
    minUploadFileSize: z.number().int().min(0).max(5_000_000_000),
    maxUploadFileSize: z.number().int().min(1).max(5_000_000_000),
    cacheControl: z.string().min(1).max(200),
    presignedUrlsEnabled: z.boolean(),
    downloadExpiration: z.number().int().min(1).max(604_800),
    allowedMimeTypes: z
      .array(z.string().regex(/^[\w.+-]+\/(\*|[\w.+-]+)$/, "must be type/subtype or type/*"))
      .max(100),
    rules: z.strictObject({ upload: rule, read: rule, update: rule, delete: rule }),
  })
  .partial();

export const createBucketSchema = updateBucketSchema.extend({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "must be 1-63 of a-z 0-9 _ - (starting with a letter or digit)"),
});

type BucketSettings = z.infer<typeof updateBucketSchema>;

/** A bucket as the API answers it: every setting, filled in. */
export const wireBucketSchema = updateBucketSchema.required().extend({
  id: z.string(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

/** The defaults of a new bucket are the `default` bucket's (storage contract §1, §4). */
export const BUCKET_DEFAULTS = {
  minUploadFileSize: 1,
  maxUploadFileSize: 50_000_000,
  cacheControl: "max-age=3600",
  presignedUrlsEnabled: true,
  downloadExpiration: 30,
  allowedMimeTypes: [] as string[],
  rules: { upload: "authenticated", read: "owner", update: "owner", delete: "owner" } as BucketRow["rules"],
};

export function toWireBucket(bucket: BucketRow) {
  return {
    ...bucket,
    createdAt: new Date(bucket.createdAt).toISOString(),
    updatedAt: new Date(bucket.updatedAt).toISOString(),
  };
}

function checkSizes(bucket: { minUploadFileSize: number; maxUploadFileSize: number }) {
  if (bucket.minUploadFileSize > bucket.maxUploadFileSize) {
    throw badRequest("minUploadFileSize must not exceed maxUploadFileSize");
  }
}

export async function createBucket(db: Db, input: { id: string } & BucketSettings, now: number) {
  const bucket = { ...BUCKET_DEFAULTS, ...input, createdAt: now, updatedAt: now };
  checkSizes(bucket);
  const row = await db.insert(buckets).values(bucket).onConflictDoNothing().returning().get();
  if (!row) throw new StorageError(409, "bucket already exists");
  return toWireBucket(row);
}

export async function updateBucket(db: Db, id: string, input: BucketSettings, now: number) {
  const current = await db.select().from(buckets).where(eq(buckets.id, id)).get();
  if (!current) throw bucketNotFound();
  checkSizes({ ...current, ...input });
  const row = await db
    .update(buckets)
    .set({ ...input, updatedAt: now })
    .where(eq(buckets.id, id))
    .returning()
    .get();
  forgetBucket(id);
  return toWireBucket(row!);
}

/**
 * `default` always exists, and a bucket with files cannot go (its files would lose their rules): its files are
 * counted in every shard. The copies of its row that shards keep for their files' foreign key (file-shards.ts) go
 * before the bucket itself: a copy that will not go (a file landed in that shard meanwhile) keeps the bucket.
 */
export async function deleteBucket(shards: Shards, id: string): Promise<void> {
  if (id === "default") throw badRequest("the default bucket cannot be deleted");
  const counts = await eachShard(shards, async (db) => {
    const [{ n }] = (await db.select({ n: count() }).from(files).where(eq(files.bucketId, id)).all()) as [
      { n: number },
    ];
    return n;
  });
  const n = counts.reduce((sum, each) => sum + each, 0);
  if (n > 0) throw badRequest("bucket is not empty", { files: n });
  await eachShard(shards, async (db, index) => {
    if (index === 0) return;
    try {
      await db.delete(buckets).where(eq(buckets.id, id)).run();
    } catch (error) {
      if (/FOREIGN KEY/i.test(String(error))) throw badRequest("bucket is not empty");
      throw error;
    }
  });
  const row = await shards.home.delete(buckets).where(eq(buckets.id, id)).returning({ id: buckets.id }).get();
  if (!row) throw bucketNotFound();
}
