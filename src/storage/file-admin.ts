import { count, desc, eq } from "drizzle-orm";
import type { Config } from "../config";
import type { Db } from "../db/client";
import { type BucketRow, buckets, type FileRow, files } from "../db/schema";
import type { Deps } from "../http/deps";
import { fileNotFound } from "./errors";
import { deleteVariants } from "./images/variants";
import { presignedUrl } from "./presign";
import { forgetFile } from "./record-cache";

/** Buckets and files as the operator sees them (the admin console): lists, removal, image previews. */

export async function listBucketsWithCounts(db: Db): Promise<(BucketRow & { files: number })[]> {
  const rows = await db
    .select({ bucket: buckets, files: count(files.id) })
    .from(buckets)
    .leftJoin(files, eq(files.bucketId, buckets.id))
    .groupBy(buckets.id)
    .orderBy(buckets.id)
    .all();
  return rows.map((row) => ({ ...row.bucket, files: row.files }));
}

export async function listBucketFiles(
  db: Db,
  bucketId: string,
  page: { limit: number; offset: number },
): Promise<{ items: FileRow[]; hasMore: boolean }> {
  const rows = await db
    .select()
    .from(files)
    .where(eq(files.bucketId, bucketId))
    .orderBy(desc(files.createdAt), desc(files.id))
    .limit(page.limit + 1)
    .offset(Math.min(Math.max(0, page.offset), 10_000))
    .all();
  return { items: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

/**
 * Removes a file: the record first (naming the key it pointed at then: if a replace landed meanwhile, that is its new
 * key, and the replace removes the old one; a replace still uploading finds no record and removes its own bytes),
 * then its bytes and its cached image variants.
 */
export async function removeFile(deps: Deps, fileId: string): Promise<void> {
  const deleted = await deps.db
    .delete(files)
    .where(eq(files.id, fileId))
    .returning({ objectKey: files.objectKey })
    .get();
  forgetFile(fileId);
  if (!deleted) throw fileNotFound();
  await deps.env.FILES.delete(deleted.objectKey);
  await deleteVariants(deps.env.FILES, fileId);
}

/** Image types the transformer previews. */
const PREVIEWABLE = /^image\/(jpeg|png|webp|avif|gif)$/;

/**
 * A small preview of an image file for the console: a presigned URL (5 minutes) with the transformer's width, when
 * the bucket allows presigned URLs; else none (the console has no user token to download with).
 */
export async function previewUrl(config: Config, file: FileRow, bucket: BucketRow, now: number) {
  if (!bucket.presignedUrlsEnabled || !file.mimeType || !PREVIEWABLE.test(file.mimeType)) return null;
  const { url } = await presignedUrl(config, file.id, 300, now);
  const preview = new URL(url);
  preview.searchParams.set("w", "160");
  preview.searchParams.set("q", "70");
  return preview.toString();
}
