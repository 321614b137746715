import { and, asc, desc, eq, gt, isNotNull, lt, or, type SQL, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { type FileRow, files } from "../db/schema";
import { eachShard, type Shards } from "../db/shards";
import { likeLiteral, slicesOf } from "./object-paths";

/**
 * Storage's `list-v2` (storage-js `listV2`): keys under a raw prefix paged by a cursor rather than an offset, so a
 * page costs `limit + 1` rows a shard however deep the listing goes. Flat: every object under the prefix, ordered
 * by the column then the key. With the delimiter: one level, each folder once (its key ends in `/`) among the files,
 * ordered by key (folders have no dates, so the column does not apply there).
 */

export interface ListV2Query {
  /** Keys that start with this (not necessarily a folder: `ph` lists `photos/…` and `phone.txt`). */
  prefix: string;
  limit: number;
  delimiter: boolean;
  sortBy: { column: "name" | "created_at" | "updated_at"; order: "asc" | "desc" };
  /** Where the previous page ended: its last key, and that entry's value of the column when it is not `name`. */
  after?: { key: string; value?: number };
  ownerId?: string;
  ids?: string[];
}

export type ListV2Entry = { folder: string } | { file: FileRow };

export interface ListV2Page {
  entries: ListV2Entry[];
  hasNext: boolean;
}

export const entryKey = (entry: ListV2Entry) => ("folder" in entry ? entry.folder : entry.file.path!);

export async function listObjectsV2(
  shards: Shards,
  bucketId: string,
  query: ListV2Query,
): Promise<ListV2Page> {
  const { prefix, limit, after } = query;
  const descending = query.sortBy.order === "desc";
  const order = descending ? desc : asc;
  const beyond = descending ? lt : gt;
  const rest = sql`substr(${files.path}, ${prefix.length + 1})`;
  const scope = and(
    eq(files.bucketId, bucketId),
    isNotNull(files.path),
    eq(files.isUploaded, true),
    sql`${files.path} LIKE ${`${likeLiteral(prefix)}%`} ESCAPE '\\'`,
    // LIKE ignores case; a key's prefix must match exactly.
    sql`substr(${files.path}, 1, ${prefix.length}) = ${prefix}`,
    query.ownerId === undefined ? undefined : eq(files.uploadedByUserId, query.ownerId),
  );
  const column = { name: files.path, created_at: files.createdAt, updated_at: files.updatedAt }[
    query.sortBy.column
  ];
  const byColumn = !query.delimiter && query.sortBy.column !== "name";
  const pastCursor = (key: SQL | typeof files.path): SQL | undefined => {
    if (!after) return undefined;
    if (!byColumn || after.value === undefined)
      return sql`${key} ${sql.raw(descending ? "<" : ">")} ${after.key}`;
    return or(beyond(column, after.value), and(eq(column, after.value), beyond(files.path, after.key)));
  };
  const folderKey = sql<string>`substr(${files.path}, 1, ${prefix.length} + instr(${rest}, '/'))`;
  const page = async (db: Db, ids: string[] | undefined): Promise<ListV2Entry[]> => {
    const where =
      ids === undefined
        ? scope
        : and(scope, sql`${files.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`);
    if (!query.delimiter) {
      const rows = await db
        .select()
        .from(files)
        .where(and(where, pastCursor(files.path)))
        .orderBy(...(byColumn ? [order(column)] : []), order(files.path))
        .limit(limit + 1)
        .all();
      return rows.map((file) => ({ file }));
    }
    const [folders, plain] = await Promise.all([
      db
        .selectDistinct({ key: folderKey })
        .from(files)
        .where(and(where, sql`instr(${rest}, '/') > 0`, pastCursor(folderKey)))
        .orderBy(order(folderKey))
        .limit(limit + 1)
        .all(),
      db
        .select()
        .from(files)
        .where(and(where, sql`instr(${rest}, '/') = 0`, pastCursor(files.path)))
        .orderBy(order(files.path))
        .limit(limit + 1)
        .all(),
    ]);
    return [...folders.map((f) => ({ folder: f.key })), ...plain.map((file) => ({ file }))];
  };
  const slices = slicesOf(query.ids);
  const parts = await eachShard(shards, async (db) => {
    const answers: ListV2Entry[] = [];
    for (const ids of slices) answers.push(...(await page(db, ids)));
    return answers;
  });
  const sign = descending ? -1 : 1;
  const value = (entry: ListV2Entry) =>
    byColumn && "file" in entry
      ? query.sortBy.column === "created_at"
        ? entry.file.createdAt
        : entry.file.updatedAt
      : 0;
  const compare = (a: ListV2Entry, b: ListV2Entry) => {
    const [x, y, ka, kb] = [value(a), value(b), entryKey(a), entryKey(b)];
    return sign * (x - y || (ka < kb ? -1 : ka > kb ? 1 : 0));
  };
  // Shards each answer their own page; a folder may be in several of them.
  const seen = new Set<string>();
  const merged = parts
    .flat()
    .sort(compare)
    .filter((entry) => {
      if (!("folder" in entry)) return true;
      if (seen.has(entry.folder)) return false;
      seen.add(entry.folder);
      return true;
    });
  return { entries: merged.slice(0, limit), hasNext: merged.length > limit };
}
