import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * The Nhost import's table: its ledger. Every table is described in docs/storage-schema.md; times are Unix
 * milliseconds.
 */

/**
 * The systems users are imported from: `nhost` (`import-nhost`, and every bucket and file), `supabase`
 * (`import-supabase`), and `import-users --from` auth0, firebase, clerk, cognito or csv.
 */
export const IMPORT_SYSTEMS = ["nhost", "supabase", "auth0", "firebase", "clerk", "cognito", "csv"] as const;
export type ImportSystem = (typeof IMPORT_SYSTEMS)[number];

/**
 * What imports from Nhost wrote (src/move-in/, `npm run admin -- import-nhost`), one row per imported user, bucket,
 * file and token. It makes a run idempotent (`fingerprint`: the row as last imported; the same again writes nothing),
 * tells a delta run what Nhost has since deleted (the ids it lists), protects what changed here since the import
 * (`row_updated_at`: the user's `updated_at` as the import wrote it), and is the tombstone of every imported refresh
 * token and PAT (kind `token`, id = the token's SHA-256): a token spent, revoked or deleted here is never written again.
 */
export const importLedger = sqliteTable(
  "import_ledger",
  {
    kind: text("kind").$type<"user" | "bucket" | "file" | "token" | "org">().notNull(),
    id: text("id").notNull(),
    /**
     * The system the row was imported from. A run reads, lists and removes only its own system's rows, so that users
     * of one system are never taken for "deleted" by another's delta run; an id is imported from one system only.
     */
    system: text("system").$type<ImportSystem>().notNull().default("nhost"),
    /** SHA-256 of the imported row as the service normalised it. */
    fingerprint: text("fingerprint").notNull(),
    /** Users: `updated_at` as written by the import; tokens: the user they belong to. */
    rowUpdatedAt: integer("row_updated_at"),
    owner: text("owner"),
    /** Users: the ids of what came with them (providers, keys, tokens, ticket), to remove what Nhost removed. */
    parts: text("parts", { mode: "json" }).$type<ImportedParts>(),
    importedAt: integer("imported_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.kind, t.id] }),
    index("import_ledger_owner").on(t.owner),
    // A system's page of ids (`GET …/ledger?system=`) without reading the other systems' rows.
    index("import_ledger_system").on(t.system, t.kind, t.id),
  ],
);

export interface ImportedParts {
  providers: string[];
  securityKeys: string[];
  /** `regular:<session id>` or `pat:<pat id>`, by token hash. */
  tokens: Record<string, string>;
  ticketHash: string | null;
  /** SHA-256 of the TOTP secret imported (null: none), so an unchanged secret is not sealed again. */
  totpHash: string | null;
  /** Factors imported under their own ids (Supabase's `auth.mfa_factors`); absent for Nhost's users. */
  factors?: string[];
  /** The expiry of each carried session or PAT (`regular:<id>` → ms) as the import last wrote it. */
  expiries?: Record<string, number>;
  /**
   * Tombstones of what was removed here after an import (src/move-in/changed-here.ts): `key:<id>`,
   * `credential:<credential id>`, `identity:<id>`, `subject:<provider>\n<provider user id>`, `totp:<hash>`. A
   * later run never writes them again.
   */
  removedHere?: string[];
  /**
   * What of the user's credentials changed here since an import (`password`, `sessions`, `mfa`, `keys`,
   * `identities`), once seen kept for good: the old system gives such a user nothing new (contract
   * supabase.md §6).
   */
  changedHere?: string[];
}

export type ImportLedgerRow = typeof importLedger.$inferSelect;
