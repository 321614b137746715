import { eq, inArray } from "drizzle-orm";
import { buckets, files } from "../db/schema";
import { AppError, UnavailableError } from "../errors";
import { withoutEvents } from "../events/record";
import type { Deps } from "../http/deps";
import { sha256Hex } from "../lib/crypto";
import { forgetFile, initialObjectKey, StorageError, storeStream } from "../storage";
import { ledgerRows, recordImport, slices } from "./ledger";
import { type FileRecord, fileRecordSchema, type ImportResult, type RowReason } from "./wire";

/**
 * Files from Nhost Storage in two steps, so a second run moves no bytes: `plan` says per record whether it is here
 * as imported (`unchanged`), needs its bytes (`needs-bytes`), or can't be imported (`skipped`, with the reason); then
 * `PUT …/files/{id}` streams the bytes into R2 and only then writes the record: a record never exists without its
 * bytes. Same id, bucket, name, size, MIME type, quoted ETag, uploader and metadata as in Nhost.
 */

type Checked =
  | { ok: true; file: FileRecord; fingerprint: string }
  | { ok: false; id: string; reasons: RowReason[] };

async function checkRecord(input: unknown): Promise<Checked> {
  const parsed = fileRecordSchema.safeParse(input);
  if (!parsed.success) {
    const id = String((input as { id?: unknown })?.id ?? "?").slice(0, 100);
    const reason = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    return { ok: false, id, reasons: [{ table: "storage.files", id, reason }] };
  }
  const file = {
    ...parsed.data,
    id: parsed.data.id.toLowerCase(),
    isUploaded: parsed.data.isUploaded === true,
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
  return { ok: true, file, fingerprint: await sha256Hex(JSON.stringify(file)) };
}

export async function planFiles(deps: Deps, inputs: unknown[]): Promise<ImportResult[]> {
  const checked = await Promise.all(inputs.map(checkRecord));
  const ids = checked.flatMap((c) => (c.ok ? [c.file.id] : []));
  const [ledger, here, bucketIds] = await Promise.all([
    ledgerRows(deps.db, "file", ids),
    Promise.all(
      slices(ids).map((part) =>
        deps.db.select({ id: files.id }).from(files).where(inArray(files.id, part)).all(),
      ),
    ).then((rows) => new Set(rows.flat().map((f) => f.id))),
    // Only the buckets these records name: the single PUT of a file asks for one, not for every bucket.
    deps.db
      .select({ id: buckets.id })
      .from(buckets)
      .where(inArray(buckets.id, [...new Set(checked.flatMap((c) => (c.ok ? [c.file.bucketId] : [])))]))
      .all()
      .then((rows) => new Set(rows.map((b) => b.id))),
  ]);
  return checked.map((c): ImportResult => {
    if (!c.ok) return { id: c.id, outcome: "skipped", reasons: c.reasons };
    const { file } = c;
    const before = ledger.get(file.id);
    const skipped = (reason: string, code?: RowReason["code"]): ImportResult => ({
      id: file.id,
      outcome: "skipped",
      reasons: [{ table: "storage.files", id: file.id, reason, ...(code ? { code } : {}) }],
    });
    if (!bucketIds.has(file.bucketId))
      return skipped(`bucket ${file.bucketId} is not here (import the buckets first)`, "bucket-missing");
    if (before && !here.has(file.id))
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
    if (!before && here.has(file.id)) return skipped("a file with this id exists here and was not imported");
    if (before?.fingerprint === c.fingerprint) return { id: file.id, outcome: "unchanged" };
    return { id: file.id, outcome: "needs-bytes" };
  });
}

/** `PUT /admin/import/nhost/files/{id}`: the bytes, then the record. */
export async function importFile(
  deps: Deps,
  id: string,
  recordHeader: string | undefined,
  body: ReadableStream<Uint8Array> | null,
): Promise<ImportResult> {
  const record = parseRecordHeader(recordHeader);
  const checked = await checkRecord(record);
  if (!checked.ok) throw new AppError("invalid-request", checked.reasons.map((r) => r.reason).join("; "));
  const { file, fingerprint } = checked;
  if (file.id !== id.toLowerCase())
    throw new AppError("invalid-request", "x-import-file names another file id");
  if (!body) throw new AppError("invalid-request", "the file's bytes are missing");
  const [plan] = await planFiles(deps, [record]);
  if (plan!.outcome === "skipped" || plan!.outcome === "kept")
    throw new AppError("invalid-request", plan!.reasons?.map((r) => r.reason).join("; "));
  if (plan!.outcome === "unchanged") {
    await body.cancel();
    return { id: file.id, outcome: "unchanged" };
  }
  const existing = await deps.db
    .select({ objectKey: files.objectKey })
    .from(files)
    .where(eq(files.id, file.id))
    .get();
  // A re-import of changed bytes goes under a new key, so a download reading the old bytes is never cut short.
  const objectKey = existing ? `${initialObjectKey(file)}/import-${deps.now()}` : initialObjectKey(file);
  let stored: { size: number; etag: string };
  try {
    stored = await storeStream(deps.env.FILES, objectKey, body, {
      minSize: file.size,
      maxSize: file.size,
      mimeTypeOf: async () => file.mimeType ?? "application/octet-stream",
    });
  } catch (error) {
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
    uploadedByUserId: file.uploadedByUserId,
    metadata: file.metadata,
    createdAt: Date.parse(file.createdAt),
    updatedAt: Date.parse(file.updatedAt),
  };
  const now = deps.now();
  try {
    // No per-file event (contract move-in §2): the file's stream is muted for this batch.
    const [first, ...rest] = withoutEvents(
      deps.db,
      [file.uploadedByUserId ?? `file:${file.id}`],
      [
        deps.db
          .insert(files)
          .values({ id: file.id, ...row })
          .onConflictDoUpdate({ target: files.id, set: row }),
        recordImport(deps.db, "file", file.id, fingerprint, now),
      ],
    );
    await deps.db.batch([first!, ...rest]);
  } catch (error) {
    await deps.env.FILES.delete(objectKey);
    throw error;
  }
  forgetFile(file.id);
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
