import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";
import { type BucketRow, buckets, type FileRow, files } from "../db/schema";
import type { Shards } from "../db/shards";
import { inFileShard } from "./file-shards";

/** The File resource of storage contract §1. */
export const wireFileSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  size: z.number().int(),
  bucketId: z.string(),
  etag: z.string().describe('The content MD5, quoted: "\\"<hex>\\""'),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  isUploaded: z.boolean(),
  mimeType: z.string(),
  uploadedByUserId: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
});
export type WireFile = z.infer<typeof wireFileSchema>;

export function toWireFile(file: FileRow): WireFile {
  return {
    id: file.id,
    name: file.name,
    size: file.size,
    bucketId: file.bucketId,
    etag: file.etag,
    createdAt: new Date(file.createdAt).toISOString(),
    updatedAt: new Date(file.updatedAt).toISOString(),
    isUploaded: file.isUploaded,
    mimeType: file.mimeType,
    ...(file.uploadedByUserId ? { uploadedByUserId: file.uploadedByUserId } : {}),
    metadata: file.metadata ?? null,
  };
}

/** Where an upload puts a file's bytes (storage contract §1); a replace moves them to a new key (replace.ts). */
export const initialObjectKey = (file: { bucketId: string; id: string }) => `${file.bucketId}/${file.id}`;

export function findBucket(db: Pick<Db, "select">, id: string): Promise<BucketRow | undefined> {
  return db.select().from(buckets).where(eq(buckets.id, id)).get();
}

export interface FileWithBucket {
  file: FileRow;
  bucket: BucketRow;
}

/** A record as a write finds it: with the shard that holds it, where the write goes. */
export interface LocatedFile extends FileWithBucket {
  db: Db;
}

/**
 * A file with its bucket (for the bucket's rules and cache settings), from the primary or a replica's session. In
 * the home database one read joins them; in another shard the bucket, which is global, comes from `bucketOf`.
 */
export async function fileWithBucketIn(
  db: Pick<Db, "select">,
  id: string,
  bucketOf?: (bucketId: string) => Promise<BucketRow | undefined>,
): Promise<FileWithBucket | undefined> {
  if (!bucketOf) {
    const row = await db
      .select({ file: files, bucket: buckets })
      .from(files)
      .innerJoin(buckets, eq(buckets.id, files.bucketId))
      .where(eq(files.id, id))
      .get();
    return row ?? undefined;
  }
  const file = await db.select().from(files).where(eq(files.id, id)).get();
  const bucket = file && (await bucketOf(file.bucketId));
  return file && bucket ? { file, bucket } : undefined;
}

/** A file with its bucket, from the primary of the shard that holds it (file-shards.ts). */
export async function findFileWithBucket(shards: Shards, id: string): Promise<LocatedFile | undefined> {
  const located = await inFileShard(shards, id, (db) =>
    fileWithBucketIn(
      db,
      id,
      db === shards.home ? undefined : (bucketId) => findBucket(shards.home, bucketId),
    ),
  );
  return located && { ...located.found, db: located.db };
}
