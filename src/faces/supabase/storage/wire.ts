import type { BucketRow, FileRow } from "../../../db/schema";

/** Storage's shapes (supabase/storage `src/storage/schemas`, the info renderer) from the core's buckets and files. */

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A bucket: `public` when anyone may read its files (its read rule is `public`); Storage's size limit and MIME types
 * are the bucket's own; `owner` is empty (buckets here belong to the service).
 */
export function toStorageBucket(bucket: BucketRow) {
  return {
    id: bucket.id,
    name: bucket.id,
    owner: "",
    public: bucket.rules.read === "public",
    type: "STANDARD",
    file_size_limit: bucket.maxUploadFileSize,
    allowed_mime_types: bucket.allowedMimeTypes.length > 0 ? bucket.allowedMimeTypes : null,
    created_at: iso(bucket.createdAt),
    updated_at: iso(bucket.updatedAt),
  };
}

/** The system metadata Storage keeps of an object (`storage.objects.metadata`). */
function systemMetadata(file: FileRow, cacheControl: string) {
  return {
    eTag: file.etag,
    size: file.size,
    mimetype: file.mimeType,
    cacheControl,
    lastModified: iso(file.updatedAt),
    contentLength: file.size,
    httpStatusCode: 200,
  };
}

/** A row of `list` (Storage's `search`): a file by its name within the folder, or a folder (`id: null`). */
export function toListFile(file: FileRow, name: string, cacheControl: string) {
  return {
    name,
    id: file.id,
    updated_at: iso(file.updatedAt),
    created_at: iso(file.createdAt),
    last_accessed_at: iso(file.updatedAt),
    metadata: systemMetadata(file, cacheControl),
    user_metadata: file.metadata,
  };
}

export const toListFolder = (name: string) => ({
  name,
  id: null,
  updated_at: null,
  created_at: null,
  last_accessed_at: null,
  metadata: null,
});

/** An object as `remove` answers each it removed (a row of `storage.objects`). */
export function toStorageObject(file: FileRow, cacheControl: string) {
  return {
    bucket_id: file.bucketId,
    name: file.path,
    id: file.id,
    owner: file.uploadedByUserId,
    owner_id: file.uploadedByUserId,
    created_at: iso(file.createdAt),
    updated_at: iso(file.updatedAt),
    last_accessed_at: iso(file.updatedAt),
    metadata: systemMetadata(file, cacheControl),
    user_metadata: file.metadata,
  };
}

/** `info` (Storage's info renderer); storage-js turns the keys to camelCase. */
export function toObjectInfo(file: FileRow, cacheControl: string) {
  return {
    id: file.id,
    name: file.path,
    version: file.etag.replaceAll('"', ""),
    bucket_id: file.bucketId,
    size: file.size,
    content_type: file.mimeType,
    cache_control: cacheControl,
    etag: file.etag,
    metadata: file.metadata,
    last_modified: iso(file.updatedAt),
    created_at: iso(file.createdAt),
  };
}
