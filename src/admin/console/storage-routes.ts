import { Hono } from "hono";
import { auditAdminAction } from "../../audit/admin-action";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { decodeCursor, encodeCursor } from "../../http/paging";
import { describeIssues } from "../../http/validation";
import {
  findBucket,
  findFileWithBucket,
  listBucketFiles,
  listBucketsWithCounts,
  previewUrl,
  removeFile,
  StorageError,
  updateBucket,
  updateBucketSchema,
} from "../../storage";
import { emailsOf } from "../users";
import { action, back, type Ctx, chromeOf, page, render } from "./handlers";
import { bucketPage, bucketsPage } from "./pages-storage";
import type { ConsoleSession } from "./session";

/**
 * Storage in the console: buckets (settings editable, with the admin API's schema) and the files of each (previews of
 * images through the transformer, deletion). Audited like the storage admin API.
 */

const bucketPath = (id: string) => `/storage/${encodeURIComponent(id)}`;

function pageStart(cursor: string | undefined): { createdAt: number; id: string } | undefined {
  if (!cursor) return undefined;
  try {
    const [createdAt, id] = decodeCursor(cursor);
    return { createdAt, id };
  } catch {
    return undefined;
  }
}

/** The settings form as the storage admin API's body. */
async function settingsBody(c: Ctx) {
  const form = await c.req.parseBody();
  const text = (name: string) =>
    typeof form[name] === "string" ? (form[name] as string).trim().slice(0, 2000) : "";
  const number = (name: string) => (text(name) === "" ? Number.NaN : Number(text(name)));
  const rule = (name: string) => {
    const value = text(`rule-${name}`);
    return ["public", "authenticated", "owner", "none"].includes(value)
      ? value
      : value
          .split(",")
          .map((role) => role.trim())
          .filter(Boolean);
  };
  const parsed = updateBucketSchema.safeParse({
    minUploadFileSize: number("minUploadFileSize"),
    maxUploadFileSize: number("maxUploadFileSize"),
    cacheControl: text("cacheControl"),
    presignedUrlsEnabled: form.presignedUrlsEnabled === "yes",
    downloadExpiration: number("downloadExpiration"),
    allowedMimeTypes: text("allowedMimeTypes")
      .split(",")
      .map((type) => type.trim())
      .filter(Boolean),
    rules: { upload: rule("upload"), read: rule("read"), update: rule("update"), delete: rule("delete") },
  });
  if (!parsed.success) throw new AppError("invalid-request", describeIssues(parsed.error.issues));
  return parsed.data;
}

async function showBucket(
  c: Ctx,
  session: ConsoleSession,
  bucketId: string,
  error?: string,
  status: 200 | 400 = 200,
) {
  const deps = c.var.deps;
  const bucket = await findBucket(deps.db, bucketId);
  if (!bucket) throw new AppError("not-found", "no bucket with this id");
  // Keyset paging (newest first, across the shards): a link carries the last file's time and id. A malformed one
  // is ignored (a view), as the users list does.
  const after = pageStart(c.req.query("after"));
  const { items, next } = await listBucketFiles(deps.shards, bucket.id, { limit: 50, after });
  const uploaders = await emailsOf(
    deps,
    items.map((file) => file.uploadedByUserId).filter((id): id is string => !!id),
  );
  const files = await Promise.all(
    items.map(async (file) => ({
      file,
      preview: await previewUrl(deps.config, file, bucket, deps.now()),
      uploader: file.uploadedByUserId ? (uploaders.get(file.uploadedByUserId) ?? null) : null,
    })),
  );
  const chrome = await chromeOf(c, session, "storage");
  // Previews come from the storage API's origin.
  const images = [new URL(deps.config.urls.storage).origin];
  return render(
    c,
    `Bucket ${bucket.id}`,
    bucketPage(chrome, {
      bucket,
      files,
      paged: after !== undefined,
      next: next ? encodeCursor(next.createdAt, next.id) : null,
      error,
    }),
    status,
    {
      images,
    },
  );
}

export const consoleStorageRoutes = new Hono<AppEnv>()
  .get(
    "/storage",
    page(async (c, session) =>
      render(
        c,
        "Storage",
        bucketsPage(await chromeOf(c, session, "storage"), await listBucketsWithCounts(c.var.deps.shards)),
      ),
    ),
  )
  .get(
    "/storage/:bucketId",
    page(async (c, session) => showBucket(c, session, c.req.param("bucketId")!)),
  )
  .post(
    "/storage/:bucketId/settings",
    action(async (c, session) => {
      const bucketId = c.req.param("bucketId")!;
      try {
        const body = await settingsBody(c);
        await updateBucket(c.var.deps.db, bucketId, body, c.var.deps.now());
        auditAdminAction(c, "storage.bucket-update", null, { bucketId });
        return back(c, bucketPath(bucketId), "saved");
      } catch (error) {
        const message =
          error instanceof StorageError && error.status < 500
            ? error.message
            : error instanceof AppError && error.status < 500
              ? error.message
              : undefined;
        if (message === undefined) throw error;
        if (error instanceof StorageError && error.status === 404) throw new AppError("not-found", message);
        return showBucket(c, session, bucketId, message, 400);
      }
    }),
  )
  .post(
    "/storage/files/:fileId/delete",
    action(async (c) => {
      const form = await c.req.parseBody();
      if (form.confirm !== "yes") throw new AppError("invalid-request", "confirm the deletion");
      const fileId = c.req.param("fileId")!;
      const file = (await findFileWithBucket(c.var.deps.shards, fileId))?.file;
      try {
        await removeFile(c.var.deps, fileId);
      } catch (error) {
        if (error instanceof StorageError && error.status === 404)
          throw new AppError("not-found", "no file with this id");
        throw error;
      }
      auditAdminAction(c, "storage.file-delete", file?.uploadedByUserId ?? null, {
        fileId,
        name: file?.name,
      });
      return back(c, file ? bucketPath(file.bucketId) : "/storage", "file-deleted");
    }),
  );
