import type { BucketRow } from "../db/schema";
import type { StreamEvent } from "../events/types";
import { deleteFiles, ensureBuckets, writeBuckets, writeFiles } from "./file-writes";
import { inTransaction, isUuid, type Sql } from "./postgres";
import { fileRowOf, userRowOf } from "./rows";
import { deleteUsers, touchLastSeen, writeUsers } from "./user-writes";
import { claimVersions } from "./versions";

/** What applying an event did: written, or left alone because the row already reflects a newer change. */
export type Applied = "written" | "stale" | "ignored";

export interface ApplyDeps {
  /** The bucket's row as D1 holds it now, or null when D1 no longer has it. */
  bucket(id: string): Promise<BucketRow | null>;
}

const record = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};

/**
 * Applies one event of the stream to the mirror (contract move-in §5.1). Idempotent, and safe in any order: each
 * write happens in one transaction with the claim of its row's version (versions.ts), so an older event than the
 * row reflects changes nothing.
 */
export async function applyEvent(sql: Sql, event: StreamEvent, deps: ApplyDeps): Promise<Applied> {
  const version = { subject: event.subject, sequence: event.sequence, at: event.timestamp };
  switch (event.type) {
    case "user.created":
    case "user.updated":
    case "email.verified":
    case "password.changed": {
      // password.changed carries the snapshot like the others; the hash itself is never in it.
      const user = userRowOf(record(event.data).user);
      if (!user) return "ignored";
      return inTransaction(sql, async () => {
        const claimed = await claimVersions(sql, "user", [{ ...version, rowId: user.id, deleted: false }]);
        if (!claimed.has(user.id)) return "stale";
        await writeUsers(sql, [user]);
        return "written";
      });
    }
    case "user.deleted": {
      const id = record(record(event.data).user).id;
      if (!isUuid(id)) return "ignored";
      return inTransaction(sql, async () => {
        const claimed = await claimVersions(sql, "user", [{ ...version, rowId: id, deleted: true }]);
        if (!claimed.has(id)) return "stale";
        await deleteUsers(sql, [id]);
        return "written";
      });
    }
    case "session.created": {
      // The sign-in's time is the user's last_seen (the service writes both together). No version: it only moves
      // forward, and touches a row that exists, so its order against the user's events does not matter.
      const session = record(record(event.data).session);
      if (!isUuid(session.userId) || typeof session.createdAt !== "string") return "ignored";
      await touchLastSeen(sql, session.userId, session.createdAt);
      return "written";
    }
    case "session.revoked":
      // Nhost keeps sessions in auth.refresh_tokens, which hold token hashes: not mirrored.
      return "ignored";
    case "file.uploaded":
    case "file.updated": {
      const file = fileRowOf(record(event.data).file);
      if (!file) return "ignored";
      // Read before the transaction: D1 is not part of it, and the lock on the version row is held shorter.
      const bucket = await deps.bucket(file.bucket_id);
      return inTransaction(sql, async () => {
        const claimed = await claimVersions(sql, "file", [{ ...version, rowId: file.id, deleted: false }]);
        if (!claimed.has(file.id)) return "stale";
        if (bucket) await writeBuckets(sql, [bucket]);
        else await ensureBuckets(sql, [file.bucket_id]);
        await writeFiles(sql, [file]);
        return "written";
      });
    }
    case "file.deleted": {
      const id = record(record(event.data).file).id;
      if (!isUuid(id)) return "ignored";
      return inTransaction(sql, async () => {
        const claimed = await claimVersions(sql, "file", [{ ...version, rowId: id, deleted: true }]);
        if (!claimed.has(id)) return "stale";
        await deleteFiles(sql, [id]);
        return "written";
      });
    }
    default:
      return "ignored";
  }
}
