import { inArray } from "drizzle-orm";
import { buckets, type ImportSystem } from "../db/schema";
import type { Deps } from "../http/deps";
import { sha256Hex } from "../lib/crypto";
import { BUCKET_DEFAULTS, forgetBucket } from "../storage";
import { ledgerRows, otherSystem, recordImport, slices } from "./ledger";
import { bucketRowSchema, type ImportResult } from "./wire";

/**
 * `POST /admin/import/nhost/buckets`: Nhost's buckets with their limits. A new bucket gets the service's default
 * access rules (storage contract §4); a bucket imported before keeps the rules set here since, only its limits follow
 * Nhost. A bucket that exists here and was not imported (`default`, created by a migration) takes Nhost's limits too:
 * every Nhost project has a `default` bucket, and its limits are the app's.
 */
export async function importBuckets(
  deps: Deps,
  inputs: unknown[],
  dryRun: boolean,
  system: ImportSystem = "nhost",
): Promise<ImportResult[]> {
  const now = deps.now();
  const parsed = inputs.map((input) => bucketRowSchema.safeParse(input));
  const ids = parsed.flatMap((p) => (p.success ? [p.data.id] : []));
  const ledger = await ledgerRows(deps.db, "bucket", ids);
  const here = new Set(
    (
      await Promise.all(
        slices(ids).map((part) =>
          deps.db.select({ id: buckets.id }).from(buckets).where(inArray(buckets.id, part)).all(),
        ),
      )
    )
      .flat()
      .map((b) => b.id),
  );
  const results: ImportResult[] = [];
  const statements = [];
  for (const [index, p] of parsed.entries()) {
    if (!p.success) {
      const id = String((inputs[index] as { id?: unknown })?.id ?? "?").slice(0, 100);
      const reason = p.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
      results.push({ id, outcome: "skipped", reasons: [{ table: "storage.buckets", id, reason }] });
      continue;
    }
    const bucket = {
      ...p.data,
      maxUploadFileSize: p.data.maxUploadFileSize ?? BUCKET_DEFAULTS.maxUploadFileSize,
    };
    if (bucket.minUploadFileSize > bucket.maxUploadFileSize) {
      const reason = "min_upload_file_size exceeds max_upload_file_size";
      results.push({
        id: bucket.id,
        outcome: "skipped",
        reasons: [{ table: "storage.buckets", id: bucket.id, reason }],
      });
      continue;
    }
    const foreign = otherSystem(ledger.get(bucket.id), system);
    if (foreign) {
      results.push({
        id: bucket.id,
        outcome: "skipped",
        reasons: [{ table: "storage.buckets", id: bucket.id, reason: foreign }],
      });
      continue;
    }
    const fingerprint = await sha256Hex(JSON.stringify(bucket));
    if (ledger.get(bucket.id)?.fingerprint === fingerprint && here.has(bucket.id)) {
      results.push({ id: bucket.id, outcome: "unchanged" });
      continue;
    }
    const fromSupabase = bucket.public !== undefined;
    const limits = {
      downloadExpiration: bucket.downloadExpiration,
      // Nhost allows 0; the service's smallest upload is one byte. Supabase's buckets keep 0, as the face's do.
      minUploadFileSize: Math.max(fromSupabase ? 0 : 1, bucket.minUploadFileSize),
      maxUploadFileSize: Math.max(1, bucket.maxUploadFileSize),
      cacheControl: bucket.cacheControl ?? BUCKET_DEFAULTS.cacheControl,
      presignedUrlsEnabled: bucket.presignedUrlsEnabled,
      updatedAt: Date.parse(bucket.updatedAt),
      ...(bucket.allowedMimeTypes === undefined ? {} : { allowedMimeTypes: bucket.allowedMimeTypes ?? [] }),
    };
    statements.push(
      deps.db
        .insert(buckets)
        .values({
          id: bucket.id,
          allowedMimeTypes: BUCKET_DEFAULTS.allowedMimeTypes,
          ...limits,
          rules: fromSupabase ? supabaseRules(bucket.public === true) : BUCKET_DEFAULTS.rules,
          createdAt: Date.parse(bucket.createdAt),
        })
        .onConflictDoUpdate({ target: buckets.id, set: limits }),
      recordImport(deps.db, "bucket", bucket.id, fingerprint, now, system),
    );
    results.push({ id: bucket.id, outcome: here.has(bucket.id) ? "updated" : "imported" });
  }
  if (!dryRun && statements.length > 0) {
    await deps.db.batch(statements as [(typeof statements)[number], ...typeof statements]);
    for (const r of results) if (r.outcome === "updated") forgetBucket(r.id);
  }
  return results;
}

/**
 * A Supabase bucket's rules here, as the Supabase face creates a bucket (src/faces/supabase/storage/bucket-routes.ts):
 * Supabase leaves objects to RLS, closed until a policy opens them, so every client rule is `none` (the import
 * reports the bucket's policies to set rules from); a public bucket's files are readable by anyone.
 */
const supabaseRules = (isPublic: boolean): (typeof BUCKET_DEFAULTS)["rules"] => ({
  upload: "none",
  read: isPublic ? "public" : "none",
  update: "none",
  delete: "none",
});
