import type { Db } from "../db/client";
import type { EventConsumer } from "../events/consume";
import { removeRelationshipsOf } from "./store";

/**
 * A deleted user's relationships go with it (contract platform.md §2): users live in shards, relationships in the
 * home database, so no one statement can do both; the `user.deleted` event of the stream does it, after the fact
 * (at least once: deleting what is gone changes nothing). An organization's go in the statement that deletes it (a
 * trigger of the migration: both live in the home database). Until the event arrives, the user is already no
 * subject (src/permissions/subjects.ts finds nobody), so a stale relationship grants nothing.
 */
export function relationshipCleanup(db: Db): EventConsumer {
  return {
    name: "permissions",
    async consume(event) {
      if (event.type !== "user.deleted") return;
      await removeRelationshipsOf(db, { type: "User", id: event.subject });
    },
  };
}
