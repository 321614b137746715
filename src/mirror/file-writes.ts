import type { BucketRow } from "../db/schema";
import type { Sql } from "./postgres";
import type { FileRow } from "./rows";

/** Writes of `storage.buckets` and `storage.files`, set-based and in place as user-writes.ts. */

/** Upserts buckets as D1 holds them (limits included): a file's row refers to its bucket's. */
export async function writeBuckets(sql: Sql, buckets: BucketRow[]): Promise<void> {
  if (buckets.length === 0) return;
  const rows = buckets.map((b) => ({
    id: b.id,
    created_at: new Date(b.createdAt).toISOString(),
    updated_at: new Date(b.updatedAt).toISOString(),
    download_expiration: b.downloadExpiration,
    min_upload_file_size: b.minUploadFileSize,
    max_upload_file_size: b.maxUploadFileSize,
    cache_control: b.cacheControl,
    presigned_urls_enabled: b.presignedUrlsEnabled,
  }));
  await sql.query(
    `INSERT INTO storage.buckets AS b (id, created_at, updated_at, download_expiration, min_upload_file_size,
       max_upload_file_size, cache_control, presigned_urls_enabled)
     SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(id text, created_at timestamptz, updated_at timestamptz,
       download_expiration int, min_upload_file_size int, max_upload_file_size int, cache_control text,
       presigned_urls_enabled boolean)
      ORDER BY id COLLATE "C"
     ON CONFLICT (id) DO UPDATE SET created_at = excluded.created_at, updated_at = excluded.updated_at,
       download_expiration = excluded.download_expiration, min_upload_file_size = excluded.min_upload_file_size,
       max_upload_file_size = excluded.max_upload_file_size, cache_control = excluded.cache_control,
       presigned_urls_enabled = excluded.presigned_urls_enabled`,
    [JSON.stringify(rows)],
  );
}

/** A bucket D1 no longer has (deleted since the event was written): its id alone, with Nhost's defaults. */
export async function ensureBuckets(sql: Sql, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql.query("INSERT INTO storage.buckets (id) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING", [
    [...new Set(ids)].sort(),
  ]);
}

export async function writeFiles(sql: Sql, files: FileRow[]): Promise<void> {
  if (files.length === 0) return;
  await sql.query(
    `INSERT INTO storage.files AS f (id, created_at, updated_at, bucket_id, name, size, mime_type, etag, is_uploaded,
       uploaded_by_user_id, metadata)
     SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, created_at timestamptz, updated_at timestamptz,
       bucket_id text, name text, size int, mime_type text, etag text, is_uploaded boolean, uploaded_by_user_id uuid,
       metadata jsonb)
      ORDER BY id
     ON CONFLICT (id) DO UPDATE SET created_at = excluded.created_at, updated_at = excluded.updated_at,
       bucket_id = excluded.bucket_id, name = excluded.name, size = excluded.size, mime_type = excluded.mime_type,
       etag = excluded.etag, is_uploaded = excluded.is_uploaded, uploaded_by_user_id = excluded.uploaded_by_user_id,
       metadata = excluded.metadata`,
    [JSON.stringify(files)],
  );
}

export async function deleteFiles(sql: Sql, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql.query("DELETE FROM storage.files WHERE id = ANY($1::uuid[])", [ids]);
}

/** Buckets D1 no longer has; their files go with them (Nhost's `fk_bucket` cascades). Nhost's `default` stays. */
export async function deleteBuckets(sql: Sql, ids: string[]): Promise<void> {
  const removable = ids.filter((id) => id !== "default");
  if (removable.length === 0) return;
  await sql.query("DELETE FROM storage.buckets WHERE id = ANY($1::text[])", [removable]);
}
