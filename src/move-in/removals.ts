import { and, eq } from "drizzle-orm";
import { eventMutes, files, importLedger, users } from "../db/schema";
import { withoutEvents } from "../events/record";
import type { Deps } from "../http/deps";
import { deleteBucket, removeFile, StorageError } from "../storage";
import { ledgerRows } from "./ledger";
import type { ImportResult } from "./wire";

/**
 * `POST /admin/import/nhost/removals`: what an earlier run imported and Nhost no longer has (a user deleted there
 * before the cut-over). Only ids in the ledger are touched: a user or file created here is never removed by an import.
 * A user goes with everything of theirs (foreign keys cascade); the ledger keeps their tokens' tombstones.
 */
export async function removeImported(
  deps: Deps,
  kind: "user" | "bucket" | "file",
  ids: string[],
  dryRun: boolean,
): Promise<ImportResult[]> {
  const ledger = await ledgerRows(deps.db, kind, ids);
  const results: ImportResult[] = [];
  for (const id of ids) {
    if (!ledger.has(id)) {
      results.push({ id, outcome: "absent" });
      continue;
    }
    if (dryRun) {
      results.push({ id, outcome: "deleted" });
      continue;
    }
    const forget = deps.db
      .delete(importLedger)
      .where(and(eq(importLedger.kind, kind), eq(importLedger.id, id)));
    if (kind === "user") {
      const [first, ...rest] = withoutEvents(
        deps.db,
        [id],
        [deps.db.delete(users).where(eq(users.id, id)), forget],
      );
      await deps.db.batch([first!, ...rest]);
      deps.audit({ type: "admin.user.delete", userId: id, detail: { by: "import-nhost" } });
    } else if (kind === "file") {
      // removeFile is storage's own write, not a batch of ours: its subject is muted around it. A change of the same
      // file by someone else meanwhile would go unannounced too; before the cut-over, nobody else has it.
      const file = await deps.db
        .select({ owner: files.uploadedByUserId })
        .from(files)
        .where(eq(files.id, id))
        .get();
      const subject = file?.owner ?? `file:${id}`;
      const ownedByMe = await deps.db
        .insert(eventMutes)
        .values({ subject })
        .onConflictDoNothing()
        .returning()
        .get();
      try {
        await removeFile(deps, id).catch((error) => {
          if (!(error instanceof StorageError)) throw error;
        });
      } finally {
        if (ownedByMe) await deps.db.delete(eventMutes).where(eq(eventMutes.subject, subject));
      }
      await forget;
    } else {
      try {
        await deleteBucket(deps.db, id);
      } catch (error) {
        if (!(error instanceof StorageError)) throw error;
        const reason = error.message;
        results.push({ id, outcome: "kept", reasons: [{ table: "storage.buckets", id, reason }] });
        continue;
      }
      await forget;
    }
    results.push({ id, outcome: "deleted" });
  }
  return results;
}
