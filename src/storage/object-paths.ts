import { and, asc, desc, eq, isNotNull, type SQL, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { claim, type DirectoryEntry, releaseEntries, shardOfEntry } from "../db/directory";
import { type BucketRow, type FileRow, files } from "../db/schema";
import { eachShard, type Shards } from "../db/shards";
import type { Deps } from "../http/deps";
import { allows, type Caller } from "./access";
import { StorageError } from "./errors";
import { fileOwner, mayHaveWritten, undone } from "./file-shards";
import { decidedByHasura, hasuraVisibleFiles } from "./hasura-permissions";
import { findBucket, type LocatedFile } from "./records";

/**
 * Objects addressed by bucket and path (the Supabase face, contract supabase.md §3). An object is a file of the
 * service whose record carries `path`, unique per bucket (the index `files_bucket_path`); the Nhost API still finds
 * it by its id. With several shards a record lives in its owner's shard (`fileOwner`: the uploader, else
 * `file:<id>`), and the directory holds `path:<bucket>/<path>` for that owner: claimed before the record is written
 * (so one path is never created in two shards), given back when the path changes away or the file goes.
 */

export const pathEntry = (bucketId: string, path: string): DirectoryEntry => ({
  kind: "path",
  value: `${bucketId}/${path}`,
});

export const objectExists = () => new StorageError(409, "The resource already exists");

/** The shard that would hold the object at `bucketId`/`path`; undefined when no shard does. */
async function shardOfPath(shards: Shards, bucketId: string, path: string): Promise<Db | undefined> {
  return shards.count === 1 ? shards.home : shardOfEntry(shards, pathEntry(bucketId, path));
}

/** The object at `path` in `bucketId`, with its bucket and shard: uploaded or still being uploaded. */
export async function findObject(
  shards: Shards,
  bucketId: string,
  path: string,
): Promise<LocatedFile | undefined> {
  const [db, bucket] = await Promise.all([
    shardOfPath(shards, bucketId, path),
    findBucket(shards.home, bucketId),
  ]);
  if (!db || !bucket) return undefined;
  const file = await db
    .select()
    .from(files)
    .where(and(eq(files.bucketId, bucketId), eq(files.path, path)))
    .get();
  return file && { file, bucket, db };
}

/**
 * Claims a path for the owner of file `id` before its record takes it (several shards only); 409 when another
 * owner's file holds it. `release` gives it back (a failed write, or the path changed away).
 */
export async function claimPath(
  shards: Shards,
  file: { id: string; uploadedByUserId: string | null },
  bucketId: string,
  path: string,
  now: number,
): Promise<void> {
  const taken = await claim(
    shards,
    fileOwner(file.id, file.uploadedByUserId),
    [pathEntry(bucketId, path)],
    now,
  );
  if (taken) throw objectExists();
}

/**
 * Claims `path` for a new file (`claimPath`). With no uploader the claim's owner is the file itself (`file:<id>`), an
 * id this request drew: a claim whose answer was lost (D1 wrote it, then the connection dropped) can only be this
 * request's, and is given back; kept, it refused the 503's retry, a new id, as another owner's (409) for the claim's
 * window. A user's claim is left as it is: their retry takes it as theirs, and another upload of theirs may hold it.
 */
export async function claimNewPath(
  shards: Shards,
  file: { id: string; uploadedByUserId: string | null },
  bucketId: string,
  path: string,
  now: number,
): Promise<void> {
  try {
    await claimPath(shards, file, bucketId, path, now);
  } catch (error) {
    if (file.uploadedByUserId === null && mayHaveWritten(error)) {
      await undone(`the claim of ${bucketId}/${path}`, () => releasePath(shards, file, bucketId, path));
    }
    throw error;
  }
}

export async function releasePath(
  shards: Shards,
  file: { id: string; uploadedByUserId: string | null },
  bucketId: string,
  path: string,
): Promise<void> {
  await releaseEntries(shards, fileOwner(file.id, file.uploadedByUserId), [pathEntry(bucketId, path)]);
}

/**
 * Gives the path's claim back after a new file's write there failed, unless a record of the claim's owner holds the
 * path: the owner's claim is one for all their uploads, and another upload of theirs may have taken the path
 * meanwhile (its unique index refused this one: 409). That file keeps its claim, and so stays found by its path.
 */
export async function releaseUnusedPath(
  shards: Shards,
  file: { id: string; uploadedByUserId: string | null },
  bucketId: string,
  path: string,
): Promise<void> {
  if (shards.count === 1) return;
  const held = await shards
    .ofUser(fileOwner(file.id, file.uploadedByUserId))
    .select({ id: files.id })
    .from(files)
    .where(and(eq(files.bucketId, bucketId), eq(files.path, path)))
    .get();
  if (!held) await releasePath(shards, file, bucketId, path);
}

/** What storage-js's `list` asks (Storage's `POST /object/list/{bucket}`). */
export interface ListQuery {
  /** A folder (`a/b`, with or without the trailing `/`); empty for the bucket's top. */
  prefix: string;
  limit: number;
  offset: number;
  sortBy: { column: "name" | "created_at" | "updated_at" | "last_accessed_at"; order: "asc" | "desc" };
  /** Only entries whose name within the folder starts with this, ignoring case. */
  search: string;
  /** Only this user's files (and the folders that hold them): a bucket whose read rule is `owner`. */
  ownerId?: string;
  /** Only these files (and the folders that hold them): the ones the app's Hasura lets the caller see. */
  ids?: string[];
}

/**
 * What a caller may list of a bucket: under the bucket's read rule everything, only their own files (`owner`), or
 * nothing (a client where Supabase's RLS would return no rows); under Hasura, the files its select permission lets
 * the caller see. Null: nothing.
 */
export async function listScope(
  deps: Deps,
  bucket: BucketRow,
  caller: Caller,
): Promise<Pick<ListQuery, "ownerId" | "ids"> | null> {
  if (caller.kind === "admin") return {};
  if (decidedByHasura(deps.config)) return { ids: await hasuraVisibleFiles(deps, caller, bucket.id) };
  if (bucket.rules.read === "owner" && caller.kind === "user") return { ownerId: caller.id };
  return allows(bucket.rules.read, caller) ? {} : null;
}

export type ListEntry = { folder: string } | { file: FileRow; name: string };

/** `%`, `_` and the escape itself are literal in a LIKE pattern only escaped. */
export const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (ch) => `\\${ch}`);

/** At most this many entries are read per shard for one page: `offset + limit` is bounded by the face. */
export const MAX_LIST_WINDOW = 11_000;

/** Ids sent to D1 in one statement (one JSON text, `json_each`): 500 ids are about 20 KB. */
const IDS_PER_STATEMENT = 500;

export function slicesOf(ids: string[] | undefined): (string[] | undefined)[] {
  if (ids === undefined) return [undefined];
  const slices: string[][] = [];
  for (let at = 0; at < ids.length; at += IDS_PER_STATEMENT)
    slices.push(ids.slice(at, at + IDS_PER_STATEMENT));
  return slices;
}

/**
 * One level of a bucket under `prefix`, as Storage's `search` answers it: the folders directly under it (a name
 * followed by `/` in some path), then the files directly in it, each sorted, the page cut from that order. Every
 * shard answers its first `offset + limit` of each kind, in the same order; the merge keeps the order. With `ids`,
 * each shard answers once per slice of them, merged the same way.
 */
export async function listObjects(shards: Shards, bucketId: string, query: ListQuery): Promise<ListEntry[]> {
  const folder = query.prefix === "" || query.prefix.endsWith("/") ? query.prefix : `${query.prefix}/`;
  const window = Math.min(query.offset + query.limit, MAX_LIST_WINDOW);
  const start = folder.length + 1;
  const rest = sql`substr(${files.path}, ${start})`;
  const under: SQL = sql`${files.path} LIKE ${`${likeLiteral(folder + query.search)}%`} ESCAPE '\\'`;
  // The case of the folder must match: LIKE ignores it, this does not.
  const inFolder = sql`substr(${files.path}, 1, ${folder.length}) = ${folder}`;
  const scope = and(
    eq(files.bucketId, bucketId),
    isNotNull(files.path),
    under,
    inFolder,
    query.ownerId === undefined ? undefined : eq(files.uploadedByUserId, query.ownerId),
  );
  const column = {
    name: files.path,
    created_at: files.createdAt,
    updated_at: files.updatedAt,
    last_accessed_at: files.updatedAt,
  }[query.sortBy.column];
  const order = query.sortBy.order === "desc" ? desc : asc;
  const level = async (db: Db, ids: string[] | undefined) => {
    const where =
      ids === undefined
        ? scope
        : and(scope, sql`${files.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`);
    const [folders, plain] = await Promise.all([
      db
        .selectDistinct({ name: sql<string>`substr(${rest}, 1, instr(${rest}, '/') - 1)` })
        .from(files)
        .where(and(where, sql`instr(${rest}, '/') > 0`, eq(files.isUploaded, true)))
        .orderBy(sql`1`)
        .limit(window)
        .all(),
      db
        .select()
        .from(files)
        .where(and(where, sql`instr(${rest}, '/') = 0`, eq(files.isUploaded, true)))
        .orderBy(order(column), asc(files.path))
        .limit(window)
        .all(),
    ]);
    return { folders: folders.map((f) => f.name), plain };
  };
  const slices = slicesOf(query.ids);
  const parts = (
    await eachShard(shards, async (db) => {
      const answers = [];
      for (const ids of slices) answers.push(await level(db, ids));
      return answers;
    })
  ).flat();
  const folders = [...new Set(parts.flatMap((p) => p.folders))].sort();
  if (query.sortBy.column === "name" && query.sortBy.order === "desc") folders.reverse();
  const key = (file: FileRow) =>
    query.sortBy.column === "name"
      ? file.path!
      : query.sortBy.column === "created_at"
        ? file.createdAt
        : file.updatedAt;
  const sign = query.sortBy.order === "desc" ? -1 : 1;
  const plain = parts
    .flatMap((p) => p.plain)
    .sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      return (x < y ? -sign : x > y ? sign : 0) || (a.path! < b.path! ? -1 : 1);
    });
  const entries: ListEntry[] = [
    ...folders.map((name) => ({ folder: name })),
    ...plain.map((file) => ({ file, name: file.path!.slice(folder.length) })),
  ];
  return entries.slice(query.offset, query.offset + query.limit);
}
