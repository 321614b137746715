import { and, count, desc, eq, lt, or } from "drizzle-orm";
import type { Config } from "../config";
import type { Db } from "../db/client";
import { type BucketRow, buckets, type FileRow, files } from "../db/schema";
import { eachShard, type Shards } from "../db/shards";
import type { Deps } from "../http/deps";
import { fileNotFound } from "./errors";
import { inFileShard, releaseDeleted } from "./file-shards";
import { deleteVariants } from "./images/variants";
import { presignedUrl } from "./presign";
import { forgetFile } from "./record-cache";

/** Buckets and files as the operator sees them (the admin console): lists, removal, image previews. */

export async function listBucketsWithCounts(shards: Shards): Promise<(BucketRow & { files: number })[]> {
  const [all, counts] = await Promise.all([
    shards.home.select().from(buckets).orderBy(buckets.id).all(),
    eachShard(shards, (db) =>
      db.select({ bucketId: files.bucketId, n: count() }).from(files).groupBy(files.bucketId).all(),
    ),
  ]);
  const totals = new Map<string, number>();
  for (const { bucketId, n } of counts.flat()) totals.set(bucketId, (totals.get(bucketId) ?? 0) + n);
  return all.map((bucket) => ({ ...bucket, files: totals.get(bucket.id) ?? 0 }));
}

/** Where a page of a bucket's files starts: `offset` files in, or (what stays cheap deep in) after a file. */
export interface FilePage {
  limit: number;
  offset?: number;
  after?: { createdAt: number; id: string };
}

/** Newest first, the id breaking ties: the order every shard sorts in, and the merge keeps. */
const newestFirst = (a: FileRow, b: FileRow) =>
  b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/**
 * A page of a bucket's files across every shard: each shard's first files of the page in the same order, merged,
 * the page taken from the merge. `next` starts the page after (keyset: its cost does not grow with depth).
 */
export async function listBucketFiles(
  shards: Shards,
  bucketId: string,
  page: FilePage,
): Promise<{ items: FileRow[]; hasMore: boolean; next: FilePage["after"] | null }> {
  const skip = page.after ? 0 : Math.min(Math.max(0, page.offset ?? 0), 10_000);
  const { after } = page;
  const parts = await eachShard(shards, (db) =>
    db
      .select()
      .from(files)
      .where(
        and(
          eq(files.bucketId, bucketId),
          after
            ? or(
                lt(files.createdAt, after.createdAt),
                and(eq(files.createdAt, after.createdAt), lt(files.id, after.id)),
              )
            : undefined,
        ),
      )
      .orderBy(desc(files.createdAt), desc(files.id))
      .limit(skip + page.limit + 1)
      .all(),
  );
  const rows = parts
    .flat()
    .sort(newestFirst)
    .slice(skip, skip + page.limit + 1);
  const items = rows.slice(0, page.limit);
  const last = items.at(-1);
  const hasMore = rows.length > page.limit;
  return { items, hasMore, next: hasMore && last ? { createdAt: last.createdAt, id: last.id } : null };
}

/**
 * Removes a file: the record first (naming the key it pointed at then: if a replace landed meanwhile, that is its new
 * key, and the replace removes the old one; a replace still uploading finds no record and removes its own bytes),
 * then its id's directory entry, its bytes and its cached image variants. `where`: the shard a read just found it in.
 */
export async function removeFile(
  deps: Pick<Deps, "shards" | "env">,
  fileId: string,
  where?: Db,
): Promise<void> {
  const remove = (db: Db) =>
    db
      .delete(files)
      .where(eq(files.id, fileId))
      .returning({ objectKey: files.objectKey, uploadedByUserId: files.uploadedByUserId })
      .get();
  const deleted = where ? await remove(where) : (await inFileShard(deps.shards, fileId, remove))?.found;
  forgetFile(fileId);
  if (!deleted) throw fileNotFound();
  await releaseDeleted(deps.shards, { id: fileId, uploadedByUserId: deleted.uploadedByUserId });
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
