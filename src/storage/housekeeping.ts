import { and, eq, lte } from "drizzle-orm";
import { releaseEntries } from "../db/directory";
import { files } from "../db/schema";
import { eachShard } from "../db/shards";
import type { Deps } from "../http/deps";
import { releaseUnusedPath } from "./object-paths";

/** An upload holds its ids for the length of one request; a day later a reservation is what a crash left. */
const STALE_UPLOAD_MS = 24 * 3600 * 1000;

/**
 * The daily sweep of upload reservations left by a crash (storage/upload.ts), in every shard: the record, then its
 * id's directory entry (a client-chosen id's, with several shards: the owner is its uploader, else the file itself),
 * then its path's claim (an object's, object-paths.ts), then any bytes.
 */
export async function sweepStaleUploads(
  { shards, env }: Pick<Deps, "shards" | "env">,
  now: number,
): Promise<void> {
  await eachShard(shards, async (db) => {
    const stale = await db
      .delete(files)
      .where(and(eq(files.isUploaded, false), lte(files.createdAt, now - STALE_UPLOAD_MS)))
      .returning({
        id: files.id,
        objectKey: files.objectKey,
        uploadedByUserId: files.uploadedByUserId,
        bucketId: files.bucketId,
        path: files.path,
      })
      .all();
    for (const row of stale) {
      await releaseEntries(shards, row.uploadedByUserId ?? `file:${row.id}`, [
        { kind: "file", value: row.id },
      ]);
      // Kept, the claim stayed for ever, old: the owner's next upload there went on under it, and another user's
      // claim took it over as stale before that upload's record was written (one path in two shards). Not while a
      // record of the claim's owner holds the path (an upload of theirs since), nor when another owner took it over.
      if (row.path !== null) await releaseUnusedPath(shards, row, row.bucketId, row.path);
    }
    for (let i = 0; i < stale.length; i += 1000) {
      await env.FILES.delete(stale.slice(i, i + 1000).map((row) => row.objectKey));
    }
  });
}
