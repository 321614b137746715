import type { Deps } from "../http/deps";
import { type FileWithBucket, findFileWithBucket } from "./records";

/**
 * File records (with their bucket) remembered for a few seconds in the isolate. Only answers that stay correct
 * with a slightly old record use them: a 304 to a revalidation, and a transformed image (its cache key holds the
 * source MD5, so a record cannot be paired with other bytes). Anything that sends the file's bytes reads D1 afresh.
 * Across isolates a change (replace, delete, new rules) therefore shows within `TTL_MS`; in this isolate at once.
 */
const TTL_MS = 5_000;
const MAX_ENTRIES = 1000;
const entries = new Map<string, { record: FileWithBucket; expires: number }>();

function remember(id: string, record: FileWithBucket, now: number): void {
  if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
  entries.set(id, { record, expires: now + TTL_MS });
}

/** The record as D1 has it now (and remembered). */
export async function currentFileWithBucket(deps: Deps, id: string): Promise<FileWithBucket | undefined> {
  const record = await findFileWithBucket(deps.db, id);
  if (record) remember(id, record, deps.now());
  else entries.delete(id);
  return record;
}

/** The record as it was at most `TTL_MS` ago; a missing file is never remembered (uploads show at once). */
export async function recentFileWithBucket(deps: Deps, id: string): Promise<FileWithBucket | undefined> {
  const entry = entries.get(id);
  if (entry && entry.expires > deps.now()) return entry.record;
  return currentFileWithBucket(deps, id);
}

/** After a replace or delete in this isolate. */
export function forgetFile(id: string): void {
  entries.delete(id);
}
