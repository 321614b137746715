import { nearbyDrizzle } from "../db/replica";
import type { BucketRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { d1Of, likelyFileShard } from "./file-shards";
import { type FileWithBucket, fileWithBucketIn, findBucket, findFileWithBucket } from "./records";

/**
 * File records (with their bucket) remembered for a few seconds in the isolate, and read from a nearby D1 replica
 * when not (docs/decisions.md, "Reads near the user"): a download no longer waits on the primary. What keeps an
 * answer from a slightly old record right:
 * - a file's bytes never change under a key: an upload writes its key once, a replace writes a new key and removes
 *   the old one after the record moved (replace.ts), a delete removes the bytes after the record. So the bytes a
 *   record's key finds are the bytes its ETag and size describe; download.ts also checks the object's size, and when
 *   the key finds nothing it reads the record from the primary and tries once more (a replaced file is served from
 *   its new bytes, a deleted one is a 404);
 * - only uploaded files are remembered (a file just uploaded is never answered "not uploaded"), and a missing one
 *   never is (uploads show at once);
 * - a replace, a delete or a bucket's new settings in this isolate forget what they change at once; elsewhere a
 *   bucket's new read rule or cache setting shows within `TTL_MS` plus the replica's lag.
 * With several shards a record is read in its shard (file-shards.ts) and its bucket, global, in the home database:
 * buckets are remembered the same few seconds on their own, so a download not remembered stays one read.
 */
const TTL_MS = 5_000;
const MAX_ENTRIES = 1000;
const entries = new Map<string, { record: FileWithBucket; expires: number }>();
const bucketEntries = new Map<string, { bucket: BucketRow; expires: number }>();

function remember(id: string, record: FileWithBucket, now: number): void {
  if (!record.file.isUploaded) return;
  if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
  // Plain data only: never the shard a write found it in (an I/O object of that request).
  entries.set(id, { record: { file: record.file, bucket: record.bucket }, expires: now + TTL_MS });
}

/** The record as the primary has it now (and remembered). */
export async function currentFileWithBucket(deps: Deps, id: string): Promise<FileWithBucket | undefined> {
  const located = await findFileWithBucket(deps.shards, id);
  const record = located && { file: located.file, bucket: located.bucket };
  if (record) remember(id, record, deps.now());
  else entries.delete(id);
  return record;
}

/** A bucket from a nearby replica of the home database, remembered like a record (for records in other shards). */
async function recentBucket(deps: Deps, bucketId: string): Promise<BucketRow | undefined> {
  const entry = bucketEntries.get(bucketId);
  if (entry && entry.expires > deps.now()) return entry.bucket;
  const bucket = await findBucket(nearbyDrizzle(deps.shards.homeD1), bucketId);
  if (!bucket) return undefined;
  if (bucketEntries.size >= MAX_ENTRIES) bucketEntries.delete(bucketEntries.keys().next().value!);
  bucketEntries.set(bucketId, { bucket, expires: deps.now() + TTL_MS });
  return bucket;
}

/**
 * The record as it was at most `TTL_MS` (plus a replica's lag) ago. A replica that lacks the file, or has it not
 * uploaded yet, is not believed: the primary is asked.
 */
export async function recentFileWithBucket(deps: Deps, id: string): Promise<FileWithBucket | undefined> {
  const entry = entries.get(id);
  if (entry && entry.expires > deps.now()) return entry.record;
  const { shards } = deps;
  // The primary's directory says no record has this id: there is nothing a replica could add.
  const shard = await likelyFileShard(shards, id);
  if (!shard) return undefined;
  const nearby = await fileWithBucketIn(
    nearbyDrizzle(d1Of(shards, shard)),
    id,
    shard === shards.home ? undefined : (bucketId) => recentBucket(deps, bucketId),
  );
  if (nearby?.file.isUploaded) {
    remember(id, nearby, deps.now());
    return nearby;
  }
  return currentFileWithBucket(deps, id);
}

/** After a replace or delete in this isolate. */
export function forgetFile(id: string): void {
  entries.delete(id);
}

/** After a bucket's settings changed in this isolate: its files' rules and cache setting come from the new row. */
export function forgetBucket(bucketId: string): void {
  bucketEntries.delete(bucketId);
  for (const [id, entry] of entries) if (entry.record.bucket.id === bucketId) entries.delete(id);
}
