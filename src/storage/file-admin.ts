import { and, count, desc, eq, lt, or } from "drizzle-orm";
import type { Config } from "../config";
import type { Db } from "../db/client";
import { type BucketRow, buckets, type FileRow, files } from "../db/schema";
import { eachShard, type Shards } from "../db/shards";
import type { Deps } from "../http/deps";
import { fileNotFound, StorageError } from "./errors";
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

/** The bytes a file's record names: the key they are under, and their ETag (a replace changes both). */
interface NamedBytes {
  objectKey: string;
  etag: string;
}

const namedBytes = (db: Db, fileId: string): Promise<NamedBytes | undefined> =>
  db.select({ objectKey: files.objectKey, etag: files.etag }).from(files).where(eq(files.id, fileId)).get();

/**
 * How many times a delete follows its record to the bytes a replace swapped in meanwhile (replace.ts) before it gives
 * up: each turn is a replace that completed within one bytes' delete, so a third means replaces keep landing.
 */
const REMOVE_ATTEMPTS = 3;

/** Replaces kept landing during the delete: the contract's 409 for a file another request changed (replace.ts's). */
const changedMeanwhile = () => new StorageError(409, "the file was changed by another request; try again");

/**
 * Removes a file: its bytes and cached image variants first, while the record still holds the id, then the record,
 * then the id's directory entry. A client-chosen id's bytes are under `<bucket>/<id>` at every upload: with the
 * record (and entry) gone first, an upload of the id landing before the bytes' delete was answered 201 and then lost
 * its bytes to it. Now that upload is refused (409, the id is taken) until the delete is over. The record goes only
 * while it still names the bytes deleted: a replace that swapped in new bytes meanwhile (and removes the old ones
 * itself) is followed to them, a few times at most (then a 409). Its `file.deleted` event is the files table's
 * trigger's (migrations/0020), written once, by the one delete that removes the record. The record's delete failing
 * after the bytes went leaves a record without bytes (a download is a 404, download.ts) until the 503's retry
 * removes it. `where`: the shard a read just found it in.
 */
export async function removeFile(
  deps: Pick<Deps, "shards" | "env">,
  fileId: string,
  where?: Db,
): Promise<void> {
  const located = where
    ? await namedBytes(where, fileId).then((found) => found && { found, db: where })
    : await inFileShard(deps.shards, fileId, (db) => namedBytes(db, fileId));
  try {
    if (!located) throw fileNotFound();
    const deleted = await removeWhileNamed(deps, fileId, located.db, located.found);
    await releaseDeleted(deps.shards, { id: fileId, uploadedByUserId: deleted.uploadedByUserId });
  } finally {
    forgetFile(fileId);
  }
}

/**
 * The bytes `bytes` names and the variants, then the record while it still names them; when it names others by then
 * (a replace), the same for those. The deleted record's uploader, for its directory entry.
 */
async function removeWhileNamed(
  deps: Pick<Deps, "env">,
  fileId: string,
  db: Db,
  bytes: NamedBytes,
): Promise<{ uploadedByUserId: string | null }> {
  let named: NamedBytes | undefined = bytes;
  for (let attempt = 0; attempt < REMOVE_ATTEMPTS && named; attempt++) {
    await deps.env.FILES.delete(named.objectKey);
    await deleteVariants(deps.env.FILES, fileId);
    const deleted = await db
      .delete(files)
      .where(and(eq(files.id, fileId), eq(files.objectKey, named.objectKey), eq(files.etag, named.etag)))
      .returning({ uploadedByUserId: files.uploadedByUserId })
      .get();
    if (deleted) return deleted;
    named = await namedBytes(db, fileId);
  }
  // Gone meanwhile (another delete): the 404 the delete of a missing file is.
  throw named ? changedMeanwhile() : fileNotFound();
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
