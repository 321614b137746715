import { and, eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { removeHomeRowsOfUser } from "../db/client-rows";
import { releaseUser } from "../db/directory";
import { eventMutes, files, type ImportSystem, importLedger, users } from "../db/schema";
import { eachShard } from "../db/shards";
import { AppError } from "../errors";
import { withoutEvents } from "../events/record";
import type { Deps } from "../http/deps";
import { deleteOrg } from "../orgs";
import { deleteBucket, releasePath, removeFile, StorageError } from "../storage";
import { ledgerRows } from "./ledger";
import type { ImportResult } from "./wire";

type Kind = "user" | "bucket" | "file" | "org";

/**
 * The database holding each id's ledger row of `system`: a user's shard, the home database for buckets and orgs, and for files
 * whichever shard has it (a file deleted here has no directory entry left to say; removals are rare, every shard is
 * asked). A row another system wrote is not this run's to remove: left out, as an id never imported.
 */
async function ledgerOf(
  deps: Deps,
  system: ImportSystem,
  kind: Kind,
  ids: string[],
): Promise<Map<string, Db>> {
  const { shards } = deps;
  const held = await eachShard(shards, async (db, index) => {
    const mine =
      kind === "user"
        ? ids.filter((id) => shards.indexOfUser(id) === index)
        : kind === "file" || index === 0
          ? ids
          : [];
    return mine.length === 0
      ? []
      : [...(await ledgerRows(db, kind, mine)).values()]
          .filter((row) => row.system === system)
          .map((row) => [row.id, db] as const);
  });
  return new Map(held.flat());
}

/**
 * `POST /admin/import/nhost/removals`: what an earlier run imported from `system` and that system no longer has (a user
 * deleted there before the cut-over). Only ids in the system's ledger are touched: a user or file created here, or
 * imported from another system, is never removed by an import.
 * A user goes with everything of theirs (foreign keys cascade), then their directory keys; the ledger keeps their
 * tokens' tombstones. An org (a Supabase SSO provider deleted there, as GoTrue's admin deletion takes its SAML
 * provider and domains) goes with its connection, domains and memberships; its users stay, as they do in Supabase.
 */
export async function removeImported(
  deps: Deps,
  system: ImportSystem,
  kind: Kind,
  ids: string[],
  dryRun: boolean,
): Promise<ImportResult[]> {
  const ledger = await ledgerOf(deps, system, kind, ids);
  const results: ImportResult[] = [];
  for (const id of ids) {
    const db = ledger.get(id);
    if (!db) {
      results.push({ id, outcome: "absent" });
      continue;
    }
    if (dryRun) {
      results.push({ id, outcome: "deleted" });
      continue;
    }
    const forget = db
      .delete(importLedger)
      .where(and(eq(importLedger.kind, kind), eq(importLedger.id, id), eq(importLedger.system, system)));
    if (kind === "user") {
      // The home rows the user's cascades no longer reach (migration 0022), first: a failure stops before the user goes.
      await removeHomeRowsOfUser(deps.shards, id);
      const [first, ...rest] = withoutEvents(db, [id], [db.delete(users).where(eq(users.id, id)), forget]);
      await db.batch([first!, ...rest]);
      // As src/auth/new-users.ts `removeUser` does: the shard first, then the keys (a key left is stale, harmless).
      await releaseUser(deps.shards, id).catch(() => {});
      deps.audit({
        type: "admin.user.delete",
        userId: id,
        detail: system === "nhost" ? { by: "import-nhost" } : { by: "import", system },
      });
    } else if (kind === "org") {
      // Deleted here already (the operator's word, org-import.ts): only its ledger row is left to forget.
      await deleteOrg(deps, id).catch((error) => {
        if (!(error instanceof AppError) || error.code !== "not-found") throw error;
      });
      await forget;
      deps.audit({ type: "admin.org.delete", userId: null, detail: { orgId: id, by: "import", system } });
    } else if (kind === "file") {
      // removeFile is storage's own write, not a batch of ours: its subject is muted around it, in the shard of the
      // record (beside its ledger row). A change of the same file by someone else meanwhile would go unannounced too;
      // before the cut-over, nobody else has it.
      const file = await db
        .select({ owner: files.uploadedByUserId, bucketId: files.bucketId, path: files.path })
        .from(files)
        .where(eq(files.id, id))
        .get();
      const subject = file?.owner ?? `file:${id}`;
      const ownedByMe = await db
        .insert(eventMutes)
        .values({ subject })
        .onConflictDoNothing()
        .returning()
        .get();
      try {
        await removeFile(deps, id, db).catch((error) => {
          if (!(error instanceof StorageError)) throw error;
        });
      } finally {
        if (ownedByMe) await db.delete(eventMutes).where(eq(eventMutes.subject, subject));
      }
      // A Supabase object's path goes with it, as the face's own removal gives it back.
      if (file?.path)
        await releasePath(deps.shards, { id, uploadedByUserId: file.owner }, file.bucketId, file.path);
      await forget;
    } else {
      try {
        await deleteBucket(deps.shards, id);
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
