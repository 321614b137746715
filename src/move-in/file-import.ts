import { eq, inArray } from "drizzle-orm";
import type { Db } from "../db/client";
import { ownersOfMany } from "../db/directory";
import { buckets, files, type ImportLedgerRow, type ImportSystem } from "../db/schema";
import { eachShard, type Shards } from "../db/shards";
import { AppError, UnavailableError } from "../errors";
import { withoutEvents } from "../events/record";
import type { Deps } from "../http/deps";
import { sha256Hex } from "../lib/crypto";
import { readPastReader } from "../lib/refused-body";
import {
  bucketAnchor,
  claimPath,
  fileEntry,
  fileOwner,
  findBucket,
  findObject,
  forgetFile,
  initialObjectKey,
  placeNewFile,
  releasePath,
  releaseUnused,
  StorageError,
  storeStream,
} from "../storage";
import { ledgerRows, otherSystem, recordImport, slices } from "./ledger";
import { byShard } from "./what-is-here";
import { type FileRecord, fileRecordSchema, type ImportResult, type RowReason } from "./wire";

/**
 * Files from Nhost Storage in two steps, so a second run moves no bytes: `plan` says per record whether it is here
 * as imported (`unchanged`), needs its bytes (`needs-bytes`), or can't be imported (`skipped`, with the reason); then
 * `PUT …/files/{id}` streams the bytes into R2 and only then writes the record: a record never exists without its
 * bytes. Same id, bucket, name, size, MIME type, quoted ETag, uploader and metadata as in Nhost.
 */

type Checked =
  | { ok: true; file: FileRecord; fingerprint: string; mirrored: boolean }
  | { ok: false; id: string; reasons: RowReason[] };

async function checkRecord(input: unknown): Promise<Checked> {
  const parsed = fileRecordSchema.safeParse(input);
  if (!parsed.success) {
    const id = String((input as { id?: unknown })?.id ?? "?").slice(0, 100);
    const reason = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    return { ok: false, id, reasons: [{ table: "storage.files", id, reason }] };
  }
  // `mirrored` says who wrote the row, not what the file is: it stays out of the record and its fingerprint.
  const { mirrored, ...record } = parsed.data;
  const file = {
    ...record,
    id: record.id.toLowerCase(),
    isUploaded: record.isUploaded === true,
  };
  if (!file.isUploaded)
    return {
      ok: false,
      id: file.id,
      reasons: [
        { table: "storage.files", id: file.id, reason: "not uploaded in Nhost (is_uploaded false): left" },
      ],
    };
  if (file.size < 1)
    return {
      ok: false,
      id: file.id,
      reasons: [
        {
          table: "storage.files",
          id: file.id,
          reason: "empty file: the service stores files of one byte or more",
        },
      ],
    };
  return { ok: true, file, fingerprint: await sha256Hex(JSON.stringify(file)), mirrored };
}

/** Where a record lives, or goes: the shard, and whether a record and a ledger row are there. */
interface Located {
  db: Db;
  here: boolean;
  before: ImportLedgerRow | undefined;
}

/**
 * Each record's shard, with what it holds of it. A record is kept beside its ledger row, in its owner's shard
 * (src/storage/file-shards.ts: Nhost's ids carry no slot): the directory's owner of its id, or, with no entry (a new
 * file, or one deleted here since), the uploader Nhost names. Read in bulk: the directory once, each shard once.
 */
async function locate(shards: Shards, records: FileRecord[]): Promise<Map<string, Located>> {
  const owners = await ownersOfMany(
    shards,
    records.map((file) => fileEntry(file.id)),
  );
  const ownerOf = (file: FileRecord) =>
    owners.get(`file:${file.id}`) ?? fileOwner(file.id, file.uploadedByUserId);
  const groups = byShard(shards, records, ownerOf);
  const found = await eachShard(shards, async (db, index) => {
    const ids = (groups.get(index) ?? []).map((file) => file.id);
    if (ids.length === 0) return [];
    const [ledger, here] = await Promise.all([
      ledgerRows(db, "file", ids),
      Promise.all(
        slices(ids).map((part) =>
          db.select({ id: files.id }).from(files).where(inArray(files.id, part)).all(),
        ),
      ).then((rows) => new Set(rows.flat().map((f) => f.id))),
    ]);
    return ids.map((id) => [id, { db, here: here.has(id), before: ledger.get(id) }] as const);
  });
  return new Map(found.flat());
}

export async function planFiles(
  deps: Deps,
  inputs: unknown[],
  system: ImportSystem = "nhost",
): Promise<ImportResult[]> {
  return (await planRecords(deps, inputs, system)).results;
}

/** The plan of each record, and where each is (importFile writes where the plan looked). */
async function planRecords(
  deps: Deps,
  inputs: unknown[],
  system: ImportSystem,
): Promise<{ results: ImportResult[]; located: Map<string, Located> }> {
  const checked = await Promise.all(inputs.map(checkRecord));
  const records = checked.flatMap((c) => (c.ok ? [c.file] : []));
  const [located, bucketIds] = await Promise.all([
    locate(deps.shards, records),
    // Only the buckets these records name: the single PUT of a file asks for one, not for every bucket.
    deps.db
      .select({ id: buckets.id })
      .from(buckets)
      .where(inArray(buckets.id, [...new Set(records.map((file) => file.bucketId))]))
      .all()
      .then((rows) => new Set(rows.map((b) => b.id))),
  ]);
  // The object at each record's path (Supabase's objects): held by another file here, the path is not free.
  const atPath = new Map(
    await Promise.all(
      records
        .filter((file) => file.path)
        .map(
          async (file) =>
            [file.id, (await findObject(deps.shards, file.bucketId, file.path!))?.file.id] as const,
        ),
    ),
  );
  const results = checked.map((c): ImportResult => {
    if (!c.ok) return { id: c.id, outcome: "skipped", reasons: c.reasons };
    const { file } = c;
    const { before, here } = located.get(file.id)!;
    const skipped = (reason: string, code?: RowReason["code"]): ImportResult => ({
      id: file.id,
      outcome: "skipped",
      reasons: [{ table: "storage.files", id: file.id, reason, ...(code ? { code } : {}) }],
    });
    const foreign = otherSystem(before, system);
    if (foreign) return skipped(foreign);
    if (!bucketIds.has(file.bucketId))
      return skipped(`bucket ${file.bucketId} is not here (import the buckets first)`, "bucket-missing");
    if (before && !here)
      return {
        id: file.id,
        outcome: "kept",
        reasons: [
          {
            table: "storage.files",
            id: file.id,
            reason: "deleted in this service since the last import: not brought back",
          },
        ],
      };
    // A row this service's Postgres mirror wrote into the database the command reads: this service's own file, never
    // brought in as Nhost's (no bytes asked for, not an error).
    if (c.mirrored && !before)
      return {
        id: file.id,
        outcome: "kept",
        reasons: [{ table: "storage.files", id: file.id, reason: MIRRORED_FILE }],
      };
    if (c.mirrored) return { id: file.id, outcome: "unchanged" };
    if (!before && here) return skipped(NOT_IMPORTED);
    const holder = atPath.get(file.id);
    if (holder && holder !== file.id) return skipped(PATH_TAKEN);
    if (before?.fingerprint === c.fingerprint) return { id: file.id, outcome: "unchanged" };
    return { id: file.id, outcome: "needs-bytes" };
  });
  return { results, located };
}

const NOT_IMPORTED = "a file with this id exists here and was not imported";
const PATH_TAKEN = "another file here has this bucket and path (an object the import did not write)";
const MIRRORED_FILE = "a file of this service, written to this database by its Postgres mirror: not imported";

/** `PUT /admin/import/nhost/files/{id}`: the bytes, then the record, in its owner's shard with its ledger row. */
export async function importFile(
  deps: Deps,
  id: string,
  recordHeader: string | undefined,
  body: ReadableStream<Uint8Array> | null,
  system: ImportSystem = "nhost",
): Promise<ImportResult> {
  const record = parseRecordHeader(recordHeader);
  const checked = await checkRecord(record);
  if (!checked.ok) throw new AppError("invalid-request", checked.reasons.map((r) => r.reason).join("; "));
  const { file, fingerprint } = checked;
  if (file.id !== id.toLowerCase())
    throw new AppError("invalid-request", "x-import-file names another file id");
  if (!body) throw new AppError("invalid-request", "the file's bytes are missing");
  const {
    results: [plan],
    located,
  } = await planRecords(deps, [record], system);
  if (plan!.outcome === "skipped" || plan!.outcome === "kept")
    throw new AppError("invalid-request", plan!.reasons?.map((r) => r.reason).join("; "));
  if (plan!.outcome === "unchanged") {
    // Answered without its bytes: read past them rather than cancel (lib/refused-body.ts: a body cancelled while
    // the client still sends it is a lost connection, which the import script would retry and then stop on).
    await readPastReader(body.getReader());
    return { id: file.id, outcome: "unchanged" };
  }
  const bucket = await findBucket(deps.db, file.bucketId);
  if (!bucket)
    throw new AppError("invalid-request", `bucket ${file.bucketId} is not here (import the buckets first)`);
  const now = deps.now();
  const { db: shard, here } = located.get(file.id)!;
  const existing = here
    ? await shard
        .select({ objectKey: files.objectKey, path: files.path })
        .from(files)
        .where(eq(files.id, file.id))
        .get()
    : undefined;
  // A new record's id is claimed for its owner first (with several shards): held by another, a file of the same id
  // exists in another shard.
  let placement: { db: Db; owner: string | null } = { db: shard, owner: null };
  if (!existing) {
    try {
      placement = await placeNewFile(deps.shards, file.id, file.uploadedByUserId, false, now);
    } catch (error) {
      if (error instanceof StorageError && error.status === 409) {
        await readPastReader(body.getReader());
        throw new AppError("invalid-request", NOT_IMPORTED);
      }
      throw error;
    }
  }
  const { db } = placement;
  // A path (Supabase's object name) is claimed for the file's owner before the record takes it, as the face's
  // uploads do; a path the file held before and no longer holds is given back once the record is written.
  const newPath = file.path && file.path !== existing?.path ? file.path : null;
  if (newPath) {
    try {
      await claimPath(deps.shards, file, file.bucketId, newPath, now);
    } catch (error) {
      await releaseUnused(deps.shards, placement, file.id);
      await readPastReader(body.getReader());
      if (error instanceof StorageError && error.status === 409)
        throw new AppError("invalid-request", PATH_TAKEN);
      throw error;
    }
  }
  const giveBack = async () => {
    await releaseUnused(deps.shards, placement, file.id);
    if (newPath) await releasePath(deps.shards, file, file.bucketId, newPath);
  };
  // A re-import of changed bytes goes under a new key, so a download reading the old bytes is never cut short.
  const objectKey = existing ? `${initialObjectKey(file)}/import-${now}` : initialObjectKey(file);
  let stored: { size: number; etag: string };
  try {
    // Not cancelled where storeStream stops (more bytes than the record's): the rest is read past below.
    stored = await storeStream(deps.env.FILES, objectKey, body.values({ preventCancel: true }), {
      minSize: file.size,
      maxSize: file.size,
      mimeTypeOf: async () => file.mimeType ?? "application/octet-stream",
    });
  } catch (error) {
    await readPastReader(body.getReader());
    await giveBack();
    if (error instanceof AppError) throw error;
    // storeStream refuses too few or too many bytes with a StorageError; anything else is R2 failing: the client
    // retries (nothing was recorded, and a partial multipart upload was aborted).
    if (error instanceof StorageError)
      throw new AppError("invalid-request", `the bytes are not the record's ${file.size} bytes`);
    throw new UnavailableError(
      `import file bytes: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  // Nhost's ETag is the MD5 of the bytes unless S3 stored them in parts (`"…-N"`): then only the size can be checked.
  if (file.etag && !file.etag.includes("-") && stored.etag !== file.etag.toLowerCase()) {
    await deps.env.FILES.delete(objectKey);
    await giveBack();
    throw new AppError(
      "invalid-request",
      `the bytes' MD5 ${stored.etag} is not the record's ETag ${file.etag}`,
    );
  }
  const row = {
    bucketId: file.bucketId,
    name: file.name ?? file.id,
    size: file.size,
    mimeType: file.mimeType ?? "application/octet-stream",
    etag: file.etag ?? stored.etag,
    objectKey,
    isUploaded: true,
    // Held by no upload: an upload of the same id under way when the import wrote over its reservation is refused.
    uploadAttempt: null,
    uploadedByUserId: file.uploadedByUserId,
    metadata: file.metadata,
    createdAt: Date.parse(file.createdAt),
    updatedAt: Date.parse(file.updatedAt),
    // Only a record that names a path sets it: an Nhost file keeps what it has.
    ...(file.path === undefined ? {} : { path: file.path }),
  };
  try {
    // No per-file event (contract move-in §2): the file's stream is muted for this batch. The record and its ledger
    // row go in one batch in one shard: a run cut short leaves both or neither.
    const [first, ...rest] = withoutEvents(
      db,
      [fileOwner(file.id, file.uploadedByUserId)],
      [
        bucketAnchor(db, bucket),
        db
          .insert(files)
          .values({ id: file.id, ...row })
          .onConflictDoUpdate({ target: files.id, set: row }),
        recordImport(db, "file", file.id, fingerprint, now, system),
      ],
    );
    await db.batch([first!, ...rest]);
  } catch (error) {
    await deps.env.FILES.delete(objectKey);
    await giveBack().catch(() => {});
    throw error;
  }
  forgetFile(file.id);
  if (newPath && existing?.path) await releasePath(deps.shards, file, file.bucketId, existing.path);
  if (existing && existing.objectKey !== objectKey)
    deps.background(deps.env.FILES.delete(existing.objectKey));
  return { id: file.id, outcome: existing ? "updated" : "imported" };
}

function parseRecordHeader(header: string | undefined): unknown {
  if (!header || header.length > 16_384)
    throw new AppError("invalid-request", "x-import-file: missing or too long");
  try {
    const base64 = header.replace(/-/g, "+").replace(/_/g, "/");
    const bytes = Uint8Array.from(atob(base64), (ch) => ch.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new AppError("invalid-request", "x-import-file: not base64url of a JSON file record");
  }
}
