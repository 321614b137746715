import { Readable } from "node:stream";
import { and, eq } from "drizzle-orm";
import { isUniqueViolation } from "../db/errors";
import { type BucketRow, type FileRow, files } from "../db/schema";
import { eachShard } from "../db/shards";
import type { Deps } from "../http/deps";
import { randomUuid } from "../lib/crypto";
import { allows, type Caller } from "./access";
import { bucketNotFound, fileNotFound, notAuthorized, StorageError } from "./errors";
import { removeFile } from "./file-admin";
import {
  bucketAnchor,
  forgetLostReservation,
  mayHaveWritten,
  mintFileId,
  type PlacedFile,
  type Reserving,
} from "./file-shards";
import {
  decidedByHasura,
  hasuraDeleteFile,
  hasuraMayRead,
  hasuraReplaceFile,
  hasuraSyncFile,
} from "./hasura-permissions";
import {
  claimNewPath,
  claimPath,
  findObject,
  objectExists,
  releasePath,
  releaseUnusedPath,
} from "./object-paths";
import { forgetFile } from "./record-cache";
import { findBucket, findFileWithBucket, type LocatedFile } from "./records";
import { replaceFromPart, replaceWithStored } from "./replace";
import type { StoredContent } from "./store-content";
import { recordUnderHasura, storeFileUnderHasura } from "./upload-hasura";
import { discardLostPublish, publish, reserve, storeFile } from "./upload-records";

/**
 * Writes to objects addressed by bucket and path (object-paths.ts), over the same records, bytes, rules, limits,
 * image cache and events as the storage API's uploads: a new object is one file uploaded (upload-records.ts), an
 * upsert one file replaced (replace.ts), a removal one file removed (file-admin.ts).
 */

export interface ObjectBody {
  /** The declared type (none or octet-stream: sniffed from the bytes, as every upload). */
  mimeType: string;
  stream: Readable;
  /** The name a download is offered under; the last segment of the path. */
  filename: string;
}

const nameOf = (path: string) => path.slice(path.lastIndexOf("/") + 1);

async function bucketOf(deps: Deps, bucketId: string): Promise<BucketRow> {
  const bucket = await findBucket(deps.shards.home, bucketId);
  if (!bucket) throw bucketNotFound();
  return bucket;
}

/**
 * Makes a new object's record visible. If D1 fails at that, the record goes (made visible or not: the answer may
 * have been lost after it was) with the bytes it names, as an upload's do (upload.ts): no record is left holding the
 * path for the retry to run into.
 */
async function published(deps: Deps, placed: PlacedFile): Promise<FileRow> {
  try {
    const [file] = await publish(deps, [placed]);
    return { ...placed.row, isUploaded: true, updatedAt: Date.parse(file!.updatedAt) };
  } catch (error) {
    await discardLostPublish(deps, [placed]);
    throw error;
  }
}

/**
 * What a new object's failed write leaves goes, so that the 503's retry finds the path as it was: the record D1 may
 * have reserved although its answer was lost (file-shards.ts), then the path's claim, unless another upload of the
 * claim's owner holds the path now (object-paths.ts `releaseUnusedPath`).
 */
async function undoNewObject(
  deps: Deps,
  reserving: Reserving,
  error: unknown,
  bucketId: string,
  path: string,
): Promise<void> {
  if (mayHaveWritten(error)) await forgetLostReservation(deps.shards, reserving);
  const owner = { id: reserving.id, uploadedByUserId: reserving.uploaderId };
  await releaseUnusedPath(deps.shards, owner, bucketId, path);
}

/**
 * A new file at `path` under the caller (its uploader, the owner), by the bucket's upload rule: its id routes to its
 * uploader's shard; with no uploader (the service role) it is a fresh id kept in the shard of `file:<id>`, as a
 * client-chosen id is (file-shards.ts), so that the path's owner names the record's shard in both cases.
 */
async function createObject(
  deps: Deps,
  bucket: BucketRow,
  path: string,
  caller: Caller,
  body: ObjectBody,
  metadata: Record<string, unknown> | null,
  preauthorized: boolean,
): Promise<FileRow> {
  // Under Hasura its insert permission decides instead, asked once the bytes are known (upload-hasura.ts).
  if (!preauthorized && !decidedByHasura(deps.config) && !allows(bucket.rules.upload, caller)) {
    throw notAuthorized();
  }
  const uploadedByUserId = caller.kind === "user" ? caller.id : null;
  const id = uploadedByUserId ? mintFileId(uploadedByUserId, 0) : randomUuid();
  const owner = { id, uploadedByUserId };
  // A user's id is minted (it routes to its record); without one, the fresh id is kept as a client's would be.
  const reserving = {
    id,
    uploaderId: uploadedByUserId,
    minted: uploadedByUserId !== null,
    since: deps.now(),
  };
  await claimNewPath(deps.shards, owner, bucket.id, path, deps.now());
  try {
    const entry = { id: uploadedByUserId ? undefined : id, name: nameOf(path), metadata, path };
    // Under Hasura the app's row is inserted first, as the storage API's uploads do (upload-hasura.ts).
    const placed = decidedByHasura(deps.config)
      ? await storeFileUnderHasura(deps, bucket, body, entry, caller, () => id)
      : await storeFile(deps, bucket, bucket, body, entry, caller, () => id);
    return await published(deps, placed);
  } catch (error) {
    await undoNewObject(deps, reserving, error, bucket.id, path);
    // The path's unique index refused the record: another upload took the path meanwhile.
    if (error instanceof StorageError && error.status === 409) throw objectExists();
    throw error;
  }
}

/**
 * A resumable upload's end: its bytes are in R2 under `key` already; a new file at `path` is recorded with them, or
 * (`upsert`) the file there takes them. The same rules, ids, path claim and Hasura calls as an upload.
 */
export async function recordObject(
  deps: Deps,
  input: {
    bucketId: string;
    path: string;
    caller: Caller;
    upsert: boolean;
    key: string;
    stored: StoredContent;
    metadata: Record<string, unknown> | null;
  },
): Promise<FileRow> {
  const { bucketId, path, caller, key, stored, metadata } = input;
  const bucket = await bucketOf(deps, bucketId);
  const found = await findObject(deps.shards, bucketId, path);
  if (found) {
    if (!input.upsert) throw objectExists();
    return replaceWithStored(deps, found, caller, key, stored, metadata ?? undefined);
  }
  const hasura = decidedByHasura(deps.config);
  if (!hasura && !allows(bucket.rules.upload, caller)) throw notAuthorized();
  const uploadedByUserId = caller.kind === "user" ? caller.id : null;
  const id = uploadedByUserId ? mintFileId(uploadedByUserId, 0) : randomUuid();
  const owner = { id, uploadedByUserId };
  // Under Hasura the record is placed as a chosen id's (recordUnderHasura is told `minted: false`).
  const minted = !hasura && uploadedByUserId !== null;
  const reserving = { id, uploaderId: uploadedByUserId, minted, since: deps.now() };
  await claimNewPath(deps.shards, owner, bucket.id, path, deps.now());
  try {
    const name = nameOf(path);
    const placed = hasura
      ? await recordUnderHasura(
          deps,
          bucket,
          { id, key, content: stored, filename: name },
          { id, minted: false, name, metadata, path },
          caller,
        )
      : await reserve(
          deps,
          bucket,
          {
            id,
            bucketId: bucket.id,
            name,
            path,
            size: stored.size,
            mimeType: stored.mimeType,
            etag: stored.etag,
            objectKey: key,
            isUploaded: false,
            uploadedByUserId,
            imageWidth: stored.image?.width ?? null,
            imageHeight: stored.image?.height ?? null,
            metadata,
            createdAt: deps.now(),
            updatedAt: deps.now(),
          },
          minted,
        );
    return await published(deps, placed);
  } catch (error) {
    await undoNewObject(deps, reserving, error, bucket.id, path);
    if (error instanceof StorageError && error.status === 409) throw objectExists();
    throw error;
  }
}

/**
 * upload / update / upsert: a new object at `path`, or (`mode` `upsert`, `update`) new bytes for the one there,
 * under its update rule. `upload` onto a taken path is 409; `update` of none is 404.
 */
export async function putObject(
  deps: Deps,
  input: {
    bucketId: string;
    path: string;
    caller: Caller;
    mode: "upload" | "upsert" | "update";
    body: ObjectBody;
    /** Undefined: none sent (a replace keeps the file's). */
    metadata?: Record<string, unknown>;
    /**
     * The rules were applied when a signed upload URL was made for the caller (its owner): a new file goes on
     * without them, as the token's holder, who may be anyone. A file found at the path is replaced under the update
     * rule as the maker: it may be one someone else stored after the URL was made.
     */
    preauthorized?: boolean;
  },
): Promise<FileRow> {
  const { bucketId, path, caller, mode, body, metadata } = input;
  const preauthorized = input.preauthorized === true;
  if (preauthorized) signedUploadUnderHasura(deps, caller);
  const bucket = await bucketOf(deps, bucketId);
  const found = await findObject(deps.shards, bucketId, path);
  if (found) {
    if (mode === "upload") throw objectExists();
    return replaceFromPart(deps, found, caller, body, metadata);
  }
  if (mode === "update") throw fileNotFound();
  return createObject(deps, bucket, path, caller, body, metadata ?? null, preauthorized);
}

/** The object at a path, uploaded and readable by the caller; else not found (no existence leak). */
export async function readableObject(
  deps: Deps,
  bucketId: string,
  path: string,
  caller: Caller,
): Promise<LocatedFile> {
  const found = await findObject(deps.shards, bucketId, path);
  if (!found?.file.isUploaded) throw fileNotFound();
  if (decidedByHasura(deps.config)) await hasuraMayRead(deps, caller, found.file.id);
  else if (!allows(found.bucket.rules.read, caller, found.file.uploadedByUserId)) throw fileNotFound();
  return found;
}

/**
 * A signed upload URL's maker may upload there (the rules an upload would apply, applied now: the URL's holder
 * uploads under them later). Under Hasura only the service role makes one: the app's insert permission is asked
 * with the uploader's token and the bytes' real type and size, and the holder of a URL carries neither the maker's
 * token nor bytes known when it was made (docs/supabase.md, "Storage").
 */
export function assertMayMakeUploadUrl(
  deps: Deps,
  bucket: BucketRow,
  caller: Caller,
  existing: FileRow | undefined,
): void {
  signedUploadUnderHasura(deps, caller);
  if (!allows(bucket.rules.upload, caller)) throw notAuthorized();
  if (existing && !allows(bucket.rules.update, caller, existing.uploadedByUserId)) throw notAuthorized();
}

/** Under Hasura a signed upload is the service role's only (above); one a user made before the switch is refused. */
function signedUploadUnderHasura(deps: Deps, caller: Caller): void {
  if (decidedByHasura(deps.config) && caller.kind !== "admin") {
    throw new StorageError(
      403,
      "signed upload URLs are made by the service role only under STORAGE_PERMISSIONS=hasura: " +
        "the app's insert permission is asked with the uploader's own token",
    );
  }
}

/**
 * move: the record takes the new bucket and path (its id, bytes and owner stay), by the source's update rule and, to
 * another bucket, the destination's upload rule. A taken destination is 409 (the unique index decides a race). Under
 * Hasura the app's row takes the new bucket and name first, under the caller's update permission (its filter, and
 * its check on the new bucket): refused, nothing moved; a move that then fails sets the row back.
 */
export async function moveObject(
  deps: Deps,
  input: { bucketId: string; from: string; toBucketId: string; to: string; caller: Caller },
): Promise<void> {
  const { caller, to } = input;
  const found = await readableObject(deps, input.bucketId, input.from, caller);
  const { file, db } = found;
  const hasura = decidedByHasura(deps.config);
  if (!hasura && !allows(found.bucket.rules.update, caller, file.uploadedByUserId)) throw notAuthorized();
  const target = await bucketOf(deps, input.toBucketId);
  if (!hasura && target.id !== found.bucket.id && !allows(target.rules.upload, caller)) throw notAuthorized();
  await claimPath(deps.shards, file, target.id, to, deps.now());
  const undo = async () => {
    await releasePath(deps.shards, file, target.id, to);
    const current = hasura ? await findFileWithBucket(deps.shards, file.id) : undefined;
    if (current) await hasuraSyncFile(deps, current.file);
  };
  if (hasura) {
    const columns = {
      bucketId: target.id,
      name: nameOf(to),
      etag: file.etag,
      mimeType: file.mimeType,
      size: file.size,
    };
    await hasuraReplaceFile(deps, caller, file.id, columns).catch(async (error) => {
      await releasePath(deps.shards, file, target.id, to);
      throw error;
    });
  }
  const update = db
    .update(files)
    .set({ bucketId: target.id, path: to, name: nameOf(to), updatedAt: deps.now() })
    .where(and(eq(files.id, file.id), eq(files.path, input.from)))
    .returning();
  let moved: FileRow[];
  try {
    moved =
      db === deps.shards.home
        ? await update
        : ((await db.batch([bucketAnchor(db, target), update]))[1] as FileRow[]);
  } catch (error) {
    await undo();
    // Drizzle wraps D1's error (its message is the query's): the violation is in the cause.
    if (isUniqueViolation(error)) throw objectExists();
    throw error;
  }
  forgetFile(file.id);
  if (moved.length === 0) {
    await undo();
    throw fileNotFound();
  }
  await releasePath(deps.shards, file, found.bucket.id, input.from);
}

/**
 * copy: a new file at the destination with the source's bytes (read by the caller), owned by the caller, under the
 * destination's upload rule and limits; `metadata` replaces the source's when given.
 */
export async function copyObject(
  deps: Deps,
  input: {
    bucketId: string;
    from: string;
    toBucketId: string;
    to: string;
    caller: Caller;
    upsert: boolean;
    metadata?: Record<string, unknown>;
  },
): Promise<FileRow> {
  const found = await readableObject(deps, input.bucketId, input.from, input.caller);
  const object = await deps.env.FILES.get(found.file.objectKey);
  if (!object) throw fileNotFound();
  const stream = Readable.fromWeb(object.body as import("node:stream/web").ReadableStream<Uint8Array>);
  return putObject(deps, {
    bucketId: input.toBucketId,
    path: input.to,
    caller: input.caller,
    mode: input.upsert ? "upsert" : "upload",
    body: { mimeType: found.file.mimeType, stream, filename: nameOf(input.to) },
    metadata: input.metadata ?? found.file.metadata ?? undefined,
  });
}

/**
 * remove: each path the caller may delete goes (record, bytes, image variants, its path's claim); the files removed
 * are answered. A path that is not there, or that the caller may not delete, is skipped, as Storage skips it. Under
 * Hasura the delete permission decides, and the app's row goes first, as the storage API's delete does
 * (file-routes.ts): one it refuses is skipped with nothing changed.
 */
export async function removeObjects(
  deps: Deps,
  bucketId: string,
  paths: string[],
  caller: Caller,
): Promise<FileRow[]> {
  const removed: FileRow[] = [];
  for (const path of new Set(paths)) {
    const found = await findObject(deps.shards, bucketId, path);
    if (!found?.file.isUploaded) continue;
    if (decidedByHasura(deps.config)) {
      if (!(await hasuraDeleted(deps, caller, found.file.id))) continue;
    } else if (!allows(found.bucket.rules.delete, caller, found.file.uploadedByUserId)) continue;
    try {
      await removeFile(deps, found.file.id, found.db);
    } catch (error) {
      if (error instanceof StorageError && error.status === 404) continue;
      throw error;
    }
    await releasePath(deps.shards, found.file, bucketId, path);
    removed.push(found.file);
  }
  return removed;
}

/** The app's row gone under the caller's delete permission; false when it refused (a 503 or a 400 is thrown). */
async function hasuraDeleted(deps: Deps, caller: Caller, id: string): Promise<boolean> {
  try {
    await hasuraDeleteFile(deps, caller, id);
    return true;
  } catch (error) {
    if (error instanceof StorageError && error.status === 403) return false;
    throw error;
  }
}

/**
 * emptyBucket: every uploaded file of the bucket goes, in every shard, a page at a time (uploads under way keep their
 * reservations: they finish or are swept). The bucket and its settings stay.
 */
export async function emptyBucket(deps: Deps, bucketId: string): Promise<void> {
  await bucketOf(deps, bucketId);
  await eachShard(deps.shards, async (db) => {
    while (true) {
      const page = await db
        .select({ id: files.id, uploadedByUserId: files.uploadedByUserId, path: files.path })
        .from(files)
        .where(and(eq(files.bucketId, bucketId), eq(files.isUploaded, true)))
        .limit(100)
        .all();
      if (page.length === 0) return;
      for (const file of page) {
        if (decidedByHasura(deps.config)) await hasuraDeleteFile(deps, { kind: "admin" }, file.id);
        await removeFile(deps, file.id, db).catch((error) => {
          // Removed meanwhile by another request: it is gone either way.
          if (!(error instanceof StorageError && error.status === 404)) throw error;
        });
        if (file.path !== null) await releasePath(deps.shards, file, bucketId, file.path);
      }
    }
  });
}
