import { and, asc, eq, gt, inArray } from "drizzle-orm";
import type { Db } from "../db/client";
import { type ImportLedgerRow, importLedger } from "../db/schema";

/**
 * The import ledger (src/db/schema.ts `importLedger`): what earlier runs wrote, read in bulk for a batch. D1 takes at
 * most 100 bound parameters per statement, so lookups go in slices of 90.
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

/** A page of imported ids in binary order, for the command's merge with Nhost's (`GET …/ledger`). */
export async function ledgerPage(
  db: Db,
  kind: "user" | "bucket" | "file",
  after: string | undefined,
  limit: number,
): Promise<{ items: string[]; next: string | null }> {
  const rows = await db
    .select({ id: importLedger.id })
    .from(importLedger)
    .where(
      after === undefined
        ? eq(importLedger.kind, kind)
        : and(eq(importLedger.kind, kind), gt(importLedger.id, after)),
    )
    .orderBy(asc(importLedger.id))
    .limit(limit)
    .all();
  const items = rows.map((row) => row.id);
  return { items, next: items.length === limit ? items[items.length - 1]! : null };
}

/** The ledger row of an imported bucket or file: what was written, so the same again writes nothing. */
export function recordImport(db: Db, kind: "bucket" | "file", id: string, fingerprint: string, now: number) {
  return db
    .insert(importLedger)
    .values({ kind, id, fingerprint, importedAt: now })
    .onConflictDoUpdate({
      target: [importLedger.kind, importLedger.id],
      set: { fingerprint, importedAt: now },
    });
}
