import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../../http/app-env";
import {
  entryKey,
  findBucket,
  type ListV2Entry,
  listObjectsV2,
  listScope,
  purgeObjectCache,
} from "../../../storage";
import { callerOf } from "./caller";
import { noSuchBucket, StorageApiError } from "./errors";
import { checkBucketId, jsonOf, objectRef } from "./request";
import { toListFile } from "./wire";

/**
 * storage-js `listV2` (Storage's `POST /object/list-v2/{bucket}`) and `purgeCache` (`DELETE /cdn/{bucket}/{path}`),
 * parsed here, done by the core (storage/object-list-v2.ts, object-cache.ts), shaped as Storage's.
 */

const sortColumn = z.enum(["name", "created_at", "updated_at"]);
const sortOrder = z.enum(["asc", "desc"]);

const listV2Body = z.object({
  prefix: z.string().max(1024).default(""),
  // Storage takes any limit from 1 and answers at most 1000.
  limit: z
    .number()
    .int()
    .min(1)
    .default(1000)
    .transform((n) => Math.min(n, 1000)),
  cursor: z.string().max(4096).optional(),
  with_delimiter: z.boolean().default(false),
  sortBy: z
    .object({ column: sortColumn, order: sortOrder.default("asc") })
    .default({ column: "name", order: "asc" }),
});

/**
 * The cursor: where a page ended and the order it was read in (Storage's continuation token carries both, and its
 * order wins over the request's). Opaque to the client and only a position: a forged one lists from elsewhere, never
 * past the caller's scope, so it is checked for shape, not signed.
 */
const cursorSchema = z.object({
  k: z.string().max(1024),
  v: z.number().int().optional(),
  c: sortColumn,
  o: sortOrder,
});
type Cursor = z.infer<typeof cursorSchema>;

const invalidCursor = () =>
  new StorageApiError(400, "InvalidParameter", "InvalidParameter", "Invalid Parameter continuation token");

function encodeCursor(cursor: Cursor): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(cursor))));
}

function decodeCursor(token: string): Cursor {
  try {
    const bytes = Uint8Array.from(atob(token), (ch) => ch.charCodeAt(0));
    const parsed = cursorSchema.safeParse(
      JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes)),
    );
    if (parsed.success) return parsed.data;
  } catch {
    // Not base64, not UTF-8 or not JSON: the same refusal as a wrong shape.
  }
  throw invalidCursor();
}

const sortValue = (entry: ListV2Entry, column: Cursor["c"]) =>
  "file" in entry && column !== "name"
    ? column === "created_at"
      ? entry.file.createdAt
      : entry.file.updatedAt
    : undefined;

export const listV2Routes = new Hono<AppEnv>()
  .post("/object/list-v2/:bucket", async (c) => {
    const body = await jsonOf(c, listV2Body);
    const cursor = body.cursor ? decodeCursor(body.cursor) : undefined;
    const sortBy = cursor ? { column: cursor.c, order: cursor.o } : body.sortBy;
    const bucket = await findBucket(c.var.deps.shards.home, checkBucketId(c.req.param("bucket")));
    if (!bucket) throw noSuchBucket();
    const scope = await listScope(c.var.deps, bucket, callerOf(c));
    if (!scope) return c.json({ hasNext: false, folders: [], objects: [] });
    const page = await listObjectsV2(c.var.deps.shards, bucket.id, {
      prefix: body.prefix,
      limit: body.limit,
      delimiter: body.with_delimiter,
      sortBy,
      after: cursor && { key: cursor.k, value: cursor.v },
      ...scope,
    });
    const folders = [];
    const objects = [];
    for (const entry of page.entries) {
      if ("folder" in entry) folders.push({ key: entry.folder, name: entry.folder });
      else {
        const path = entry.file.path!;
        objects.push({ ...toListFile(entry.file, path, bucket.cacheControl), key: path });
      }
    }
    const last = page.entries.at(-1);
    const nextCursor =
      page.hasNext && last
        ? encodeCursor({
            k: entryKey(last),
            v: sortValue(last, sortBy.column),
            c: sortBy.column,
            o: sortBy.order,
          })
        : undefined;
    return c.json({ hasNext: page.hasNext, nextCursor, folders, objects });
  })
  .delete("/cdn/:bucket/*", async (c) => {
    // Storage's CDN routes take the service role's JWT only (enforceJwtRoles).
    if (callerOf(c).kind !== "admin") {
      throw new StorageApiError(403, "AccessDenied", "Unauthorized", "Access denied: Invalid role");
    }
    const { bucketId, path } = objectRef(c, "/cdn/");
    await purgeObjectCache(c.var.deps, bucketId, path, c.req.query("transformations") === "true");
    return c.json({ message: "success" });
  });
