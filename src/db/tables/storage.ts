import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * Storage's tables: buckets and file records (the bytes are in R2). Every table is described in docs/storage-
 * schema.md; times are Unix milliseconds.
 */

/**
 * Who may do what in a bucket (storage contract §4): per action, `public`, `authenticated`, `owner` (the file's
 * uploader), `none` (the admin only: a bucket made through the Supabase face, as Supabase denies by default) or a
 * list of roles.
 */
export type AccessRule = "public" | "authenticated" | "owner" | "none" | string[];
export interface BucketRules {
  upload: AccessRule;
  read: AccessRule;
  update: AccessRule;
  delete: AccessRule;
}

/** Storage buckets; `default` is created by a migration and always exists. */
export const buckets = sqliteTable("buckets", {
  id: text("id").primaryKey(),
  minUploadFileSize: integer("min_upload_file_size").notNull().default(1),
  maxUploadFileSize: integer("max_upload_file_size").notNull().default(50_000_000),
  cacheControl: text("cache_control").notNull().default("max-age=3600"),
  presignedUrlsEnabled: integer("presigned_urls_enabled", { mode: "boolean" }).notNull().default(true),
  downloadExpiration: integer("download_expiration").notNull().default(30),
  /** Patterns such as `image/*`; empty means any type. */
  allowedMimeTypes: text("allowed_mime_types", { mode: "json" })
    .$type<string[]>()
    .notNull()
    .default(sql`'[]'`),
  rules: text("rules", { mode: "json" }).$type<BucketRules>().notNull(),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/** File records; the bytes are in R2 under `object_key`. `is_uploaded` is false while an upload holds the id. */
export const files = sqliteTable(
  "files",
  {
    id: text("id").primaryKey(),
    bucketId: text("bucket_id")
      .notNull()
      .references(() => buckets.id),
    name: text("name").notNull(),
    size: integer("size").notNull(),
    mimeType: text("mime_type").notNull(),
    /** Quoted hex MD5 of the bytes, computed while they stream in. */
    etag: text("etag").notNull(),
    /**
     * Where the bytes are in R2: `<bucketId>/<id>` for an upload, `<bucketId>/<id>/<version>` after a replace (and
     * for an upload under `STORAGE_PERMISSIONS=hasura`, stored before Hasura is asked), so a replace never overwrites
     * bytes that another request may be reading or recording (docs/decisions.md).
     */
    objectKey: text("object_key").notNull().default(""),
    /** Pixel size of an image as shown (EXIF orientation applied), read from its header at upload; else null. */
    imageWidth: integer("image_width"),
    imageHeight: integer("image_height"),
    isUploaded: integer("is_uploaded", { mode: "boolean" }).notNull().default(false),
    uploadedByUserId: text("uploaded_by_user_id"),
    metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown> | null>(),
    /**
     * The object's key within its bucket when it is addressed by path (the Supabase face: `folder/cat.png`), unique
     * per bucket; null for a file addressed by id only (the Nhost API's uploads). docs/decisions.md, Issue 43.
     */
    path: text("path"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /**
     * The upload that wrote this record: a random id drawn at its reservation (null for records from before, and for
     * imported ones). A DELETE of an upload under way and a new upload of the same client-chosen id meanwhile make
     * another record under the same id and key: every statement of the first upload names its own record by this, not
     * by the id alone (src/storage/upload-records.ts `heldBy`), and a replace's swap compares it (replace.ts).
     */
    uploadAttempt: text("upload_attempt"),
  },
  (t) => [
    index("files_bucket_id").on(t.bucketId),
    // Unique and ordered: an object is found, and a folder listed, by a range of this index.
    uniqueIndex("files_bucket_path").on(t.bucketId, t.path),
  ],
);

export type BucketRow = typeof buckets.$inferSelect;
export type FileRow = typeof files.$inferSelect;

/**
 * Resumable uploads under way (the Supabase face's TUS, src/faces/supabase/storage/resumable-routes.ts): where the
 * bytes go in R2 (a multipart upload), how far they came, and the MD5 so far; the file's record is written when the
 * last byte came. Each step moves `offset` by a conditional update, so two requests never both append at one offset.
 */
export const resumableUploads = sqliteTable("resumable_uploads", {
  id: text("id").primaryKey(),
  bucketId: text("bucket_id").notNull(),
  path: text("path").notNull(),
  /** The uploader (the file's owner), or null for the service role. */
  ownerId: text("owner_id"),
  upsert: integer("upsert", { mode: "boolean" }).notNull(),
  length: integer("length").notNull(),
  offset: integer("offset").notNull(),
  /** The size of every part but the last (R2 wants them equal), fixed by the first. */
  partSize: integer("part_size"),
  /** The last part is in and R2 joined them: only the record is left to write (a retry writes it). */
  completed: integer("completed", { mode: "boolean" }).notNull().default(false),
  objectKey: text("object_key").notNull(),
  r2UploadId: text("r2_upload_id").notNull(),
  /** `[{partNumber, etag}]` so far. */
  parts: text("parts", { mode: "json" }).$type<{ partNumber: number; etag: string }[]>().notNull(),
  /** The MD5 state after `offset` bytes (src/lib/md5.ts). */
  md5: text("md5").notNull(),
  contentType: text("content_type").notNull(),
  metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown> | null>(),
  createdAt: integer("created_at").notNull(),
  expiresAt: integer("expires_at").notNull(),
});

export type ResumableUploadRow = typeof resumableUploads.$inferSelect;
