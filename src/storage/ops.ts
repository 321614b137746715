import { eq, inArray } from "drizzle-orm";
import type { Db } from "../db/client";
import { type FileRow, files } from "../db/schema";
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

async function brokenMetadata(db: Db, bucket: R2Bucket): Promise<FileRow[]> {
  const [rows, keys] = await Promise.all([db.select().from(files).all(), allObjectKeys(bucket)]);
  return rows.filter((file) => file.isUploaded && !keys.has(file.objectKey));
}

export async function listBrokenMetadata(db: Db, bucket: R2Bucket) {
  return { metadata: (await brokenMetadata(db, bucket)).map(opsMetadata) };
}

export async function deleteBrokenMetadata(db: Db, bucket: R2Bucket) {
  const broken = await brokenMetadata(db, bucket);
  // D1 binds at most 100 parameters a statement.
  for (let i = 0; i < broken.length; i += 90) {
    await db.delete(files).where(
      inArray(
        files.id,
        broken.slice(i, i + 90).map((file) => file.id),
      ),
    );
  }
  return { metadata: broken.map(opsMetadata) };
}

export async function notUploaded(db: Db) {
  const rows = await db.select().from(files).where(eq(files.isUploaded, false)).all();
  return { metadata: rows.map(opsMetadata) };
}

async function orphans(db: Db, bucket: R2Bucket): Promise<string[]> {
  const [rows, keys] = await Promise.all([db.select().from(files).all(), allObjectKeys(bucket)]);
  const known = new Set(rows.map((file) => file.objectKey));
  return [...keys].filter((key) => !known.has(key));
}

export async function listOrphans(db: Db, bucket: R2Bucket) {
  return { files: await orphans(db, bucket) };
}

export async function deleteOrphans(db: Db, bucket: R2Bucket) {
  const found = await orphans(db, bucket);
  // R2 deletes up to 1000 keys per call.
  for (let i = 0; i < found.length; i += 1000) await bucket.delete(found.slice(i, i + 1000));
  return { files: found };
}
