import { and, eq, inArray, lte } from "drizzle-orm";
import { releaseEntries } from "../db/directory";
import { files } from "../db/schema";
import { eachShard } from "../db/shards";
import type { Deps } from "../http/deps";
import { releaseUnusedPath } from "./object-paths";

/** An upload holds its ids for the length of one request; a day later a reservation is what a crash left. */
const STALE_UPLOAD_MS = 24 * 3600 * 1000;

/** Stale rows removed at a time: their ids are bound in one statement, and D1 binds at most 100 parameters. */
const SWEEP_BATCH = 90;

/**
 * The daily sweep of upload reservations left by a crash (storage/upload.ts), in every shard, a batch of rows at a
 * time: their bytes first, while the rows still hold their ids, then the rows still stale, then their ids' directory
 * entries (a client-chosen id's, with several shards: the owner is its uploader, else the file itself) and their
 * paths' claims (an object's, object-paths.ts). Rows and claims gone first, an upload of a chosen id in between stored
 * its bytes under the same key (`<bucket>/<id>`), and then the sweep deleted them: a 201 whose file answered 404.
 * While a row holds the id, that upload is refused (409).
 */
export async function sweepStaleUploads(
  { shards, env }: Pick<Deps, "shards" | "env">,
  now: number,
): Promise<void> {
  const stillStale = and(eq(files.isUploaded, false), lte(files.createdAt, now - STALE_UPLOAD_MS));
  await eachShard(shards, async (db) => {
    const stale = await db
      .select({ id: files.id, objectKey: files.objectKey })
      .from(files)
      .where(stillStale)
      .all();
    for (let i = 0; i < stale.length; i += SWEEP_BATCH) {
      const batch = stale.slice(i, i + SWEEP_BATCH);
      await env.FILES.delete(batch.map((row) => row.objectKey));
      const swept = await db
        .delete(files)
        .where(
          and(
            inArray(
              files.id,
              batch.map((row) => row.id),
            ),
            stillStale,
          ),
        )
        .returning({
          id: files.id,
          uploadedByUserId: files.uploadedByUserId,
          bucketId: files.bucketId,
          path: files.path,
        })
        .all();
      for (const row of swept) {
        await releaseEntries(shards, row.uploadedByUserId ?? `file:${row.id}`, [
          { kind: "file", value: row.id },
        ]);
        // Kept, the claim stayed for ever, old: the owner's next upload there went on under it, and another user's
        // claim took it over as stale before that upload's record was written (one path in two shards). Not while a
        // record of the claim's owner holds the path (an upload of theirs since), nor when another owner took it over.
        if (row.path !== null) await releaseUnusedPath(shards, row, row.bucketId, row.path);
      }
    }
  });
}
