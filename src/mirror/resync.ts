import type { Shards } from "../db/shards";
import {
  bucketsByIds,
  bucketsPage,
  fileSnapshots,
  filesPresent,
  type SnapshotWithSequence,
  userSnapshots,
  usersPresent,
} from "./d1-reads";
import { deleteBuckets, deleteFiles, ensureBuckets, writeBuckets, writeFiles } from "./file-writes";
import { inTransaction, isUuid, type Sql } from "./postgres";
import { type FileRow, fileRowOf, fileSubject, type UserRow, userRowOf } from "./rows";
import { deleteUsers, releaseTakenIdentities, writeUsers } from "./user-writes";
import { claimVersions, type Version } from "./versions";

/**
 * `mirror-resync` (contract move-in §5.1): rebuilds the mirror from D1, one page per call, so that no request runs
 * long and an interrupted run resumes from its cursor. Phases, in order: delete the mirror's users that D1 no longer
 * has (first, so their addresses are free for the users written next), write every user, then the same for buckets
 * and files. Tables are never dropped: rows are upserted or deleted one by one, and each write claims its row's
 * version like an event does (versions.ts), so the stream running meanwhile and the resync never undo each other.
 */
export const PHASES = ["prune-users", "users", "prune-buckets", "buckets", "prune-files", "files"] as const;
export type Phase = (typeof PHASES)[number];

export const PAGE = 200;

export interface ResyncDeps {
  sql: Sql;
  /** Every shard's users and files; buckets from the home database. */
  shards: Shards;
  now: () => number;
}

export interface ResyncPage {
  phase: Phase;
  written: number;
  deleted: number;
  /** Rows left as they were: the mirror already reflects a newer change, or the row cannot exist there (no UUID). */
  skipped: number;
  /** The cursor of the next call; null once every phase is done. */
  next: string | null;
}

/** `<phase>:<last id done>`; no cursor starts from the beginning. */
export function parseCursor(cursor: string | undefined): { phase: Phase; after: string } {
  if (!cursor) return { phase: PHASES[0], after: "" };
  const colon = cursor.indexOf(":");
  const phase = cursor.slice(0, colon) as Phase;
  const after = cursor.slice(colon + 1);
  if (colon < 0 || !PHASES.includes(phase)) throw new RangeError("unknown cursor");
  // The mirror's pages start after a uuid (auth.users, storage.files).
  if ((phase === "prune-users" || phase === "prune-files") && after !== "" && !isUuid(after)) {
    throw new RangeError("unknown cursor");
  }
  return { phase, after };
}

function nextCursor(phase: Phase, lastId: string | undefined, full: boolean): string | null {
  if (full && lastId !== undefined) return `${phase}:${lastId}`;
  const following = PHASES[PHASES.indexOf(phase) + 1];
  return following ? `${following}:` : null;
}

export async function resyncPage(deps: ResyncDeps, cursor: string | undefined): Promise<ResyncPage> {
  const { phase, after } = parseCursor(cursor);
  const at = new Date(deps.now()).toISOString();
  const counts = await PAGE_OF[phase](deps, after, at);
  return {
    phase,
    written: counts.written,
    deleted: counts.deleted,
    skipped: counts.skipped,
    next: nextCursor(phase, counts.lastId, counts.seen === PAGE),
  };
}

interface Counts {
  written: number;
  deleted: number;
  skipped: number;
  /** Rows this page looked at, and the last one's id: where the next page starts. */
  seen: number;
  lastId?: string;
}

const PAGE_OF: Record<Phase, (deps: ResyncDeps, after: string, at: string) => Promise<Counts>> = {
  async "prune-users"(deps, after, at) {
    const { rows } = await deps.sql.query<{ id: string }>(
      "SELECT id::text AS id FROM auth.users WHERE ($1 = '' OR id > NULLIF($1, '')::uuid) ORDER BY id LIMIT $2",
      [after, PAGE],
    );
    const ids = rows.map((row) => row.id);
    const gone = ids.length === 0 ? [] : (await usersPresent(deps.shards, ids)).filter((p) => !p.present);
    const deleted = await inTransaction(deps.sql, async () => {
      const claimed = await claimVersions(
        deps.sql,
        "user",
        gone.map((p) => tombstone(p.id, p.id, p.last, at)),
      );
      await deleteUsers(deps.sql, [...claimed]);
      return claimed.size;
    });
    return { written: 0, deleted, skipped: gone.length - deleted, seen: ids.length, lastId: ids.at(-1) };
  },

  async users(deps, after, at) {
    const page = await userSnapshots(deps.shards, after, PAGE);
    const rows = parsed(page, userRowOf);
    const written = await inTransaction(deps.sql, async () => {
      const claimed = await claimVersions(
        deps.sql,
        "user",
        rows.map(({ source, row }) => current(row.id, source, at)),
      );
      const users: UserRow[] = rows.filter(({ row }) => claimed.has(row.id)).map(({ row }) => row);
      await releaseTakenIdentities(deps.sql, users);
      await writeUsers(deps.sql, users);
      return users.length;
    });
    return {
      written,
      deleted: 0,
      skipped: page.length - written,
      seen: page.length,
      lastId: page.at(-1)?.id,
    };
  },

  async "prune-buckets"(deps, after) {
    const { rows } = await deps.sql.query<{ id: string }>(
      `SELECT id FROM storage.buckets WHERE id COLLATE "C" > $1 ORDER BY id COLLATE "C" LIMIT $2`,
      [after, PAGE],
    );
    const ids = rows.map((row) => row.id);
    const present = new Set((await bucketsByIds(deps.shards.homeD1, ids)).map((bucket) => bucket.id));
    const gone = ids.filter((id) => !present.has(id) && id !== "default");
    // Buckets have no events: nothing to claim. Their files go with them (fk_bucket cascades).
    await deleteBuckets(deps.sql, gone);
    return { written: 0, deleted: gone.length, skipped: 0, seen: ids.length, lastId: ids.at(-1) };
  },

  async buckets(deps, after) {
    const page = await bucketsPage(deps.shards.homeD1, after, PAGE);
    await writeBuckets(deps.sql, page);
    return { written: page.length, deleted: 0, skipped: 0, seen: page.length, lastId: page.at(-1)?.id };
  },

  async "prune-files"(deps, after, at) {
    const { rows } = await deps.sql.query<{ id: string; uploader: string | null }>(
      `SELECT id::text AS id, uploaded_by_user_id::text AS uploader FROM storage.files
        WHERE ($1 = '' OR id > NULLIF($1, '')::uuid) ORDER BY id LIMIT $2`,
      [after, PAGE],
    );
    const files = rows.map((row) => ({
      id: row.id,
      subject: fileSubject({ id: row.id, uploadedByUserId: row.uploader }),
    }));
    const subjects = new Map(files.map((file) => [file.id, file.subject]));
    const gone = files.length === 0 ? [] : (await filesPresent(deps.shards, files)).filter((p) => !p.present);
    const deleted = await inTransaction(deps.sql, async () => {
      const claimed = await claimVersions(
        deps.sql,
        "file",
        gone.map((p) => tombstone(p.id, subjects.get(p.id) ?? `file:${p.id}`, p.last, at)),
      );
      await deleteFiles(deps.sql, [...claimed]);
      return claimed.size;
    });
    return {
      written: 0,
      deleted,
      skipped: gone.length - deleted,
      seen: files.length,
      lastId: files.at(-1)?.id,
    };
  },

  async files(deps, after, at) {
    const page = await fileSnapshots(deps.shards, after, PAGE);
    const rows = parsed(page, fileRowOf);
    // A bucket made since the buckets phase: written with the page, before its files refer to it.
    const bucketIds = [...new Set(rows.map(({ row }) => row.bucket_id))];
    const known = await bucketsByIds(deps.shards.homeD1, bucketIds);
    const written = await inTransaction(deps.sql, async () => {
      const claimed = await claimVersions(
        deps.sql,
        "file",
        rows.map(({ source, row }) => current(row.id, source, at)),
      );
      const files: FileRow[] = rows.filter(({ row }) => claimed.has(row.id)).map(({ row }) => row);
      await writeBuckets(deps.sql, known);
      await ensureBuckets(
        deps.sql,
        files.map((file) => file.bucket_id),
      );
      await writeFiles(deps.sql, files);
      return files.length;
    });
    return {
      written,
      deleted: 0,
      skipped: page.length - written,
      seen: page.length,
      lastId: page.at(-1)?.id,
    };
  },
};

/** The page's snapshots as rows, without those that cannot be mirrored (ids that are not UUIDs). */
function parsed<Row>(
  page: SnapshotWithSequence[],
  rowOf: (snapshot: unknown) => Row | null,
): { source: SnapshotWithSequence; row: Row }[] {
  return page.flatMap((source) => {
    const row = rowOf(JSON.parse(source.snapshot));
    return row ? [{ source, row }] : [];
  });
}

/** The version a resync's read gives a row D1 has: the state as of its subject's last sequence. */
const current = (rowId: string, source: SnapshotWithSequence, at: string): Version => ({
  rowId,
  subject: source.subject,
  sequence: source.last,
  deleted: false,
  at,
});

/**
 * A row D1 no longer has, recorded deleted as of its subject's last sequence (0 when its subject never had an event:
 * a row put in the mirror by hand), at the time of the read that found it gone.
 */
const tombstone = (rowId: string, subject: string, last: number | null, at: string): Version => ({
  rowId,
  subject,
  sequence: last ?? 0,
  deleted: true,
  at,
});
