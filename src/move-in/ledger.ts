import { and, asc, eq, gt, inArray } from "drizzle-orm";
import type { Db } from "../db/client";
import { IMPORT_SYSTEMS, type ImportLedgerRow, type ImportSystem, importLedger } from "../db/schema";
import { eachShard, type Shards } from "../db/shards";

/**
 * The import ledger (src/db/schema.ts `importLedger`): what earlier runs wrote, read in bulk for a batch. D1 takes at
 * most 100 bound parameters per statement, so lookups go in slices of 90. A user's rows (its own and its tokens') and a
 * file's are in the shard of what they describe, written in the same batch; buckets' in the home database.
 */

const SLICE = 90;

export function slices<T>(items: readonly T[], size = SLICE): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export async function ledgerRows(
  db: Db,
  kind: ImportLedgerRow["kind"],
  ids: readonly string[],
): Promise<Map<string, ImportLedgerRow>> {
  const found = new Map<string, ImportLedgerRow>();
  for (const part of slices([...new Set(ids)])) {
    const rows = await db
      .select()
      .from(importLedger)
      .where(and(eq(importLedger.kind, kind), inArray(importLedger.id, part)))
      .all();
    for (const row of rows) found.set(row.id, row);
  }
  return found;
}

/**
 * A page of the ids one system's runs imported, in binary order, for the command's merge with that system's
 * (`GET …/ledger`): another system's users are not "gone" from this one. Buckets' rows are in the home database;
 * users' and files' beside what they describe, in every shard: each shard's next `limit`, merged.
 */
export async function ledgerPage(
  shards: Shards,
  system: ImportSystem,
  kind: "user" | "bucket" | "file" | "org",
  after: string | undefined,
  limit: number,
): Promise<{ items: string[]; next: string | null }> {
  const mine = and(eq(importLedger.system, system), eq(importLedger.kind, kind));
  const read = (db: Db) =>
    db
      .select({ id: importLedger.id })
      .from(importLedger)
      .where(after === undefined ? mine : and(mine, gt(importLedger.id, after)))
      .orderBy(asc(importLedger.id))
      .limit(limit)
      .all();
  const parts =
    kind === "bucket" || kind === "org" ? [await read(shards.home)] : await eachShard(shards, read);
  // Users' and files' ids are Nhost's UUIDs: ASCII, which JavaScript orders as SQLite's BINARY does.
  const ids = parts.flat().map((row) => row.id);
  const items = (parts.length === 1 ? ids : ids.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).slice(0, limit);
  return { items, next: items.length === limit ? items[items.length - 1]! : null };
}

/** The ledger row of an imported bucket or file: what was written, so the same again writes nothing. */
export function recordImport(
  db: Db,
  kind: "bucket" | "file",
  id: string,
  fingerprint: string,
  now: number,
  system: ImportSystem = "nhost",
) {
  // The system never changes on a conflict: a row of another system is refused before (otherSystem below).
  return db
    .insert(importLedger)
    .values({ kind, id, fingerprint, importedAt: now, system })
    .onConflictDoUpdate({
      target: [importLedger.kind, importLedger.id],
      set: { fingerprint, importedAt: now },
    });
}

/**
 * The system a user of a batch is recorded under: the run's (`system` on the batch); a bundle that names its own
 * (import-supabase's `system`, which shapes what the checks expect) must agree with it, and a batch without one takes
 * the bundle's, then `nhost`. A user whose system disagrees with the run's is skipped: it would be listed and removed
 * under one system and written under another.
 */
export function userSystem(input: unknown, run: ImportSystem | undefined): ImportSystem | { reason: string } {
  const own = (input as { system?: unknown } | null)?.system;
  if (own === undefined) return run ?? "nhost";
  const known = (IMPORT_SYSTEMS as readonly unknown[]).includes(own);
  if (known && (run === undefined || own === run)) return own as ImportSystem;
  return {
    reason: `the user's system ${JSON.stringify(own).slice(0, 40)} is not the run's (${run ?? "nhost"})`,
  };
}

/** A bucket's or file's ledger row written by another system's runs: that system's, never this run's to overwrite. */
export function otherSystem(row: ImportLedgerRow | undefined, system: ImportSystem): string | null {
  return row && row.system !== system
    ? `already imported from ${row.system}: not imported from ${system}`
    : null;
}
