import type { Readable } from "node:stream";
import { and, eq, inArray } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { z } from "zod";
import type { Db } from "../db/client";
import { type BucketRow, type FileRow, files } from "../db/schema";
import type { Deps } from "../http/deps";
import { metadataSchema } from "../lib/json-metadata";
import type { Caller } from "./access";
import { badRequest, deletedWhileUploading } from "./errors";
import {
  bucketAnchor,
  duplicateFile,
  type PlacedFile,
  placeNewFile,
  releaseUnused,
  unpublishLost,
} from "./file-shards";
import { decidedByHasura, hasuraForgetFiles } from "./hasura-permissions";
import { initialObjectKey, toWireFile, type WireFile } from "./records";
import { type ContentRules, storeContent } from "./store-content";
import type { StagedBytes } from "./upload-hasura";

/** `metadata[]` entries (storage contract §2): one per file, paired by order. */
const metadataEntry = z.object({
  id: z.uuid("id must be a UUID").optional(),
  name: z.string().min(1).max(1024).optional(),
  metadata: metadataSchema.nullable().optional(),
});
export type MetadataEntry = z.infer<typeof metadataEntry>;

export function parseMetadata(text: string): MetadataEntry {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw badRequest("metadata[] must be JSON");
  }
  const parsed = metadataEntry.safeParse(json);
  if (!parsed.success) throw badRequest(`metadata[]: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  return parsed.data;
}

/** What the upload holds of one file until the end: its record (not visible yet), or under Hasura its bytes alone. */
export interface Held {
  placed?: PlacedFile;
  staged?: StagedBytes;
}

type NewFile = typeof files.$inferInsert;

/**
 * Holds `values.id` for this upload with a record that says `is_uploaded = false`, by one INSERT that fails on an
 * existing id. Two uploads racing for one client-chosen id: one holds it, the other is refused (409). With several
 * shards the id's directory claim comes first, so the two cannot both win in different shards (file-shards.ts).
 * `replacing`: a record of this upload the new one takes the place of, deleted in the same batch when they share a
 * shard (a metadata[] naming the id after its file's bytes came: upload-settle.ts).
 */
export async function reserve(
  deps: Deps,
  bucket: BucketRow,
  values: NewFile,
  minted: boolean,
  replacing?: PlacedFile,
): Promise<PlacedFile> {
  const { id } = values;
  const placement = await placeNewFile(deps.shards, id, values.uploadedByUserId ?? null, minted, deps.now());
  const { db } = placement;
  const statements: BatchItem<"sqlite">[] = [];
  if (replacing) {
    const drop = replacing.placement.db.delete(files).where(unpublished([replacing.row.id]));
    if (replacing.placement.db === db) statements.push(drop);
    else await drop;
  }
  if (db !== deps.shards.home) statements.push(bucketAnchor(db, bucket));
  const insert = db.insert(files).values(values).onConflictDoNothing().returning();
  let row: FileRow | undefined;
  try {
    if (statements.length === 0) [row] = await insert;
    else {
      const batch = [...statements, insert] as unknown as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]];
      [row] = (await db.batch(batch)).at(-1) as FileRow[];
    }
  } finally {
    if (!row) await releaseUnused(deps.shards, placement, id);
  }
  if (!row) throw duplicateFile(id);
  return { row, placement };
}

/**
 * Stores one file part under a reserved id; on any failure the reservation and any bytes written go. `path`: the
 * object's key in its bucket, for a file addressed by path (object-writes.ts); its unique index refuses a taken one.
 */
export async function storeFile(
  deps: Deps,
  bucket: BucketRow,
  rules: ContentRules,
  part: { filename: string; mimeType: string; stream: Readable },
  entry: (MetadataEntry & { path?: string }) | undefined,
  caller: Caller,
  newId: () => string,
  reservation = '""',
): Promise<PlacedFile> {
  const id = entry?.id ?? newId();
  const now = deps.now();
  const reserved = await reserve(
    deps,
    bucket,
    {
      id,
      bucketId: bucket.id,
      name: entry?.name ?? (part.filename || id),
      size: 0,
      mimeType: "application/octet-stream",
      etag: reservation,
      objectKey: initialObjectKey({ bucketId: bucket.id, id }),
      isUploaded: false,
      uploadedByUserId: caller.kind === "user" ? caller.id : null,
      path: entry?.path ?? null,
      createdAt: now,
      updatedAt: now,
    },
    !entry?.id,
  );
  try {
    const stored = await storeContent(deps, rules, reserved.row.objectKey, part);
    const row = await reserved.placement.db
      .update(files)
      .set({
        size: stored.size,
        mimeType: stored.mimeType,
        etag: stored.etag,
        imageWidth: stored.image?.width ?? null,
        imageHeight: stored.image?.height ?? null,
        metadata: entry?.metadata ?? null,
      })
      .where(eq(files.id, id))
      .returning()
      .get();
    // The reservation went meanwhile (a DELETE of this upload under way): refused, its bytes discarded below.
    if (!row) throw deletedWhileUploading();
    return { row, placement: reserved.placement };
  } catch (error) {
    await discard(deps, [{ placed: reserved }]);
    throw error;
  }
}

/**
 * Gives a reserved record the bucket, name and metadata the rest of the form said (upload-settle.ts), in place: its
 * id stays. Only a record not yet visible is changed.
 */
export async function amend(
  deps: Deps,
  placed: PlacedFile,
  values: Pick<FileRow, "bucketId" | "name" | "metadata">,
  bucket: BucketRow,
): Promise<PlacedFile> {
  const { db } = placed.placement;
  const update = db
    .update(files)
    .set(values)
    .where(unpublished([placed.row.id]))
    .returning();
  const [row] =
    db === deps.shards.home
      ? await update
      : ((await db.batch([bucketAnchor(db, bucket), update]))[1] as FileRow[]);
  // A reservation under way goes only by a DELETE of it (or the housekeeping's sweep of uploads left for hours).
  if (!row) throw deletedWhileUploading();
  return { row, placement: placed.placement };
}

const unpublished = (ids: string[]) => and(inArray(files.id, ids), eq(files.isUploaded, false));

/** The records of this upload by the shard that holds them (with one uploader, or one shard: one group). */
function byShard(stored: PlacedFile[]): Map<Db, FileRow[]> {
  const groups = new Map<Db, FileRow[]>();
  for (const { row, placement } of stored)
    groups.set(placement.db, [...(groups.get(placement.db) ?? []), row]);
  return groups;
}

/**
 * Removes what this upload holds that will not be kept, its records not visible: bytes first (a record's, and staged
 * bytes that never got one), while the records still hold their ids; then the records, their ids' directory claims,
 * and (under Hasura) the app's rows this upload inserted. A chosen id's bytes go under `<bucket>/<id>` at every
 * attempt: with the record and claim gone first, another upload could reserve the id and store its bytes there
 * before this delete removed them (a 201 for a file without bytes). A crash between the two steps leaves a
 * reservation without bytes, which the daily sweep removes. The bytes' delete failing, the rest goes all the same
 * (the bytes left are no record's, and the next upload of the id writes over them) and its error is thrown.
 */
export async function discard(deps: Deps, held: Held[]): Promise<void> {
  const bytes = await removeBytes(deps, held).then(
    () => undefined,
    (error: unknown) => ({ error }),
  );
  await forgetRecords(deps, held);
  if (bytes) throw bytes.error;
}

async function removeBytes(deps: Deps, held: Held[]): Promise<void> {
  const keys = held.flatMap(({ placed, staged }) => [
    ...(placed ? [placed.row.objectKey] : []),
    ...(staged && staged.key !== placed?.row.objectKey ? [staged.key] : []),
  ]);
  if (keys.length > 0) await deps.env.FILES.delete(keys);
}

/** `discard`'s second step: the records not visible, their ids' claims, the app's rows under Hasura. */
async function forgetRecords(deps: Deps, held: Held[]): Promise<void> {
  const stored = held.flatMap(({ placed }) => (placed ? [placed] : []));
  for (const [db, rows] of byShard(stored)) {
    for (let i = 0; i < rows.length; i += 90) {
      await db.delete(files).where(unpublished(rows.slice(i, i + 90).map((row) => row.id)));
    }
  }
  for (const { row, placement } of stored) await releaseUnused(deps.shards, placement, row.id);
  if (stored.length > 0 && decidedByHasura(deps.config)) {
    await hasuraForgetFiles(
      deps,
      stored.map(({ row }) => row.id),
    );
  }
}

/**
 * After publishing these files failed (D1 may have made them visible before its answer was lost): those taken back
 * (file-shards.ts `unpublishLost`) are discarded, bytes first. One D1 failed to take back may be visible: its bytes
 * stay (never a visible file without them), and only a record still not visible goes, with its claim. Without this
 * the 503 left visible files whose bytes were removed, and the retry met them.
 */
export async function discardLostPublish(deps: Deps, stored: PlacedFile[]): Promise<void> {
  const { held, unsure } = await unpublishLost(stored);
  await forgetRecords(
    deps,
    unsure.map((placed) => ({ placed })),
  );
  await discard(
    deps,
    held.map((placed) => ({ placed })),
  );
}

/**
 * Makes the files of this upload visible, all at once in each shard (D1 binds at most 100 parameters a statement).
 * An upload's files share a shard unless it has no uploader and names ids of its own (file-shards.ts).
 */
export async function publish(deps: Deps, stored: PlacedFile[]): Promise<WireFile[]> {
  const now = deps.now();
  for (const [db, rows] of byShard(stored)) {
    const statements = [];
    for (let i = 0; i < rows.length; i += 90) {
      const ids = rows.slice(i, i + 90).map((row) => row.id);
      statements.push(
        db
          .update(files)
          .set({ isUploaded: true, updatedAt: now })
          .where(inArray(files.id, ids))
          .returning({ id: files.id }),
      );
    }
    const [first, ...rest] = statements;
    if (!first) continue;
    const published = (await db.batch([first, ...rest])).flat().length;
    // A record deleted meanwhile (a DELETE of this upload under way) is not answered 201: the caller's undo takes
    // back the others (`discardLostPublish`), so the upload is refused whole.
    if (published < rows.length) throw deletedWhileUploading();
  }
  return stored.map(({ row }) => toWireFile({ ...row, isUploaded: true, updatedAt: now }));
}
