import { eq, inArray } from "drizzle-orm";
import type { Db } from "../db/client";
import { type FileRow, files } from "../db/schema";
import { eachShard, type Shards } from "../db/shards";
import { releaseDeleted } from "./file-shards";
import { VARIANTS_PREFIX } from "./images/variants";

/**
 * The maintenance endpoints (`ops/*`, storage contract §2): records whose bytes are missing ("broken metadata"),
 * records never completed ("not uploaded"), and R2 objects without a record ("orphans", what a crash between the
 * R2 write and the D1 insert leaves). They walk the whole bucket and table: maintenance, not a hot path.
 */

const opsMetadata = (file: FileRow) => ({
  id: file.id,
  name: file.name,
  bucketId: file.bucketId,
  isUploaded: file.isUploaded,
});

async function allObjectKeys(bucket: R2Bucket): Promise<Set<string>> {
  const keys = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ cursor, limit: 1000 });
    // Cached image variants are not files: they belong to their file and go with it. Their prefix cannot be a
    // bucket's (it starts with `_`), so no file's bytes are skipped here.
    for (const object of page.objects) if (!object.key.startsWith(VARIANTS_PREFIX)) keys.add(object.key);
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return keys;
}

/** Every record of every shard, each with the shard that holds it. */
async function allRecords(shards: Shards): Promise<{ file: FileRow; db: Db }[]> {
  const parts = await eachShard(shards, async (db) =>
    (await db.select().from(files).all()).map((file) => ({ file, db })),
  );
  return parts.flat();
}

async function brokenMetadata(shards: Shards, bucket: R2Bucket) {
  const [rows, keys] = await Promise.all([allRecords(shards), allObjectKeys(bucket)]);
  return rows.filter(({ file }) => file.isUploaded && !keys.has(file.objectKey));
}

export async function listBrokenMetadata(shards: Shards, bucket: R2Bucket) {
  return { metadata: (await brokenMetadata(shards, bucket)).map(({ file }) => opsMetadata(file)) };
}

export async function deleteBrokenMetadata(shards: Shards, bucket: R2Bucket) {
  const broken = await brokenMetadata(shards, bucket);
  for (const db of new Set(broken.map((record) => record.db))) {
    const ids = broken.filter((record) => record.db === db).map(({ file }) => file.id);
    // D1 binds at most 100 parameters a statement.
    for (let i = 0; i < ids.length; i += 90) {
      await db.delete(files).where(inArray(files.id, ids.slice(i, i + 90)));
    }
  }
  for (const { file } of broken) await releaseDeleted(shards, file);
  return { metadata: broken.map(({ file }) => opsMetadata(file)) };
}

export async function notUploaded(shards: Shards) {
  const parts = await eachShard(shards, (db) =>
    db.select().from(files).where(eq(files.isUploaded, false)).all(),
  );
  return { metadata: parts.flat().map(opsMetadata) };
}

async function orphans(shards: Shards, bucket: R2Bucket): Promise<string[]> {
  const [rows, keys] = await Promise.all([allRecords(shards), allObjectKeys(bucket)]);
  const known = new Set(rows.map(({ file }) => file.objectKey));
  return [...keys].filter((key) => !known.has(key));
}

export async function listOrphans(shards: Shards, bucket: R2Bucket) {
  return { files: await orphans(shards, bucket) };
}

export async function deleteOrphans(shards: Shards, bucket: R2Bucket) {
  const found = await orphans(shards, bucket);
  // R2 deletes up to 1000 keys per call.
  for (let i = 0; i < found.length; i += 1000) await bucket.delete(found.slice(i, i + 1000));
  return { files: found };
}
