import type { BucketRow, FileRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { allows, type Caller } from "./access";
import { notAuthorized } from "./errors";
import { type PlacedFile, reservedOrForgotten } from "./file-shards";
import { decidedByHasura } from "./hasura-permissions";
import { MalformedUpload } from "./multipart";
import { refusal } from "./store-content";
import { recordUnderHasura, type StagedBytes } from "./upload-hasura";
import { amend, type Held, type MetadataEntry, reserve } from "./upload-records";

/**
 * The parts of an upload may come in any order (storage contract §2): nhost-js 4.x sends `bucket-id`, every
 * `metadata[]`, then every `file[]`; nhost-js 3.x (and @nhost/react, @nhost/nextjs on it) sends each `file[]` before
 * its `metadata[]` and `bucket-id` last, as Nhost Storage, which reads the whole form before it stores anything,
 * accepts. Here a file's bytes go to R2 as they arrive (never held whole), so a file is stored with what the form
 * said before it, and settled once the form is read with what came after: its metadata[] entry (id, name,
 * metadata) and the upload's bucket.
 */
export interface FormFile extends Held {
  /** 1-based, as the messages count the parts. */
  index: number;
  filename: string;
  /** The metadata[] entry that came before the bytes (the one the record was written with). */
  entry: MetadataEntry | undefined;
  /** The bucket the record was written in: the one named before the bytes, else `default`. */
  bucket: BucketRow;
  /** The bytes passed that bucket's own rules (false: only the loosest of all buckets', store-content.ts). */
  exact: boolean;
}

/**
 * One file with the final word of its form. Its bucket's rules are applied now if the bytes streamed under looser
 * ones or the bucket changed; a record is renamed in place, or moved to the id a late metadata[] names: a new
 * reservation of that id, refused (409) if any record holds it (another user's file is never touched), the
 * provisional record deleted with it. Under Hasura, staged bytes get their row and record now (upload-hasura.ts).
 */
export async function settle(
  deps: Deps,
  file: FormFile,
  entry: MetadataEntry | undefined,
  bucket: BucketRow,
  caller: Caller,
): Promise<PlacedFile> {
  const hasura = decidedByHasura(deps.config);
  if (!file.exact || bucket.id !== file.bucket.id) {
    const facts = file.placed?.row ?? file.staged?.content;
    const refused = facts && refusal(bucket, facts);
    if (refused) throw refused;
    if (!hasura && !allows(bucket.rules.upload, caller)) throw notAuthorized();
  }
  if (file.staged && !file.placed) {
    const id = entry?.id ?? file.staged.id;
    return recordedOrForgotten(deps, bucket, file.staged, { ...entry, id, minted: !entry?.id }, caller);
  }
  const placed = file.placed!;
  if (entry === file.entry && bucket.id === file.bucket.id) return placed;
  if (hasura) {
    // Recorded (and inserted into the app's table) in the bucket named before it; only a client that names a
    // second bucket after its files gets here.
    throw new MalformedUpload(
      `bucket-id comes after file[] part ${file.index}, stored in bucket ${file.bucket.id}`,
    );
  }
  const { row } = placed;
  const id = entry?.id ?? row.id;
  const values = {
    bucketId: bucket.id,
    name: entry?.name ?? (file.filename || id),
    metadata: entry?.metadata ?? null,
  };
  if (id === row.id) return amend(deps, placed, values, bucket);
  const now = deps.now();
  return movedOrUndone(deps, bucket, { ...row, ...values, id, createdAt: now, updatedAt: now }, placed);
}

/**
 * Staged bytes recorded under Hasura (upload-hasura.ts `recordUnderHasura`), what that may have reserved undone when
 * it fails (file-shards.ts `reservedOrForgotten`). The undo knows the record by the bytes' key, a version this
 * attempt drew: another upload of the same uploader may hold a chosen id, reserved while this one's answer was lost,
 * and its record stays.
 */
export function recordedOrForgotten(
  deps: Deps,
  bucket: BucketRow,
  staged: StagedBytes,
  file: { id: string; minted: boolean; name?: string; metadata?: Record<string, unknown> | null },
  caller: Caller,
): Promise<PlacedFile> {
  const reserving = {
    id: file.id,
    uploaderId: caller.kind === "user" ? caller.id : null,
    minted: file.minted,
    since: deps.now(),
    objectKey: staged.key,
  };
  return reservedOrForgotten(
    deps.shards,
    () => reserving,
    () => recordUnderHasura(deps, bucket, staged, file, caller),
  );
}

/**
 * The record moved to the id a late metadata[] names: reserved anew under it (`reserve`, the provisional record
 * deleted with it), what it may have reserved undone when that fails (file-shards.ts `reservedOrForgotten`). The
 * undo knows its record by its bytes' key, the provisional id's: another upload of the same uploader may hold the
 * chosen id, reserved while this move's answer was lost (its refusal unseen), and that upload's record stays.
 */
function movedOrUndone(
  deps: Deps,
  bucket: BucketRow,
  values: FileRow,
  provisional: PlacedFile,
): Promise<PlacedFile> {
  const reserving = {
    id: values.id,
    uploaderId: values.uploadedByUserId,
    minted: false,
    since: values.createdAt,
    objectKey: values.objectKey,
  };
  return reservedOrForgotten(
    deps.shards,
    () => reserving,
    () => reserve(deps, bucket, values, false, provisional),
  );
}

/** Settles the files in order; stops at the first that fails, with the files before it settled. */
export async function settleAll(
  deps: Deps,
  form: FormFile[],
  entries: MetadataEntry[],
  bucket: BucketRow,
  caller: Caller,
): Promise<{ kept: PlacedFile[]; rest: Held[]; failure?: unknown }> {
  const kept: PlacedFile[] = [];
  for (const [i, file] of form.entries()) {
    try {
      kept.push(await settle(deps, file, entries[i], bucket, caller));
    } catch (failure) {
      return { kept, rest: form.slice(i), failure };
    }
  }
  return { kept, rest: [] };
}
