// Reading a Nhost project's Postgres (contract move-in §1) with one `pg` Client. Every table is read in keyset pages
// (`WHERE id > $1 ORDER BY id LIMIT n`), so memory stays flat whatever its size, and every page is its own short
// query: no transaction is held open for the hours a million users take on a live database (a row changed meanwhile
// is caught by the next, delta, run).
//
// Nhost's schema changed between versions (its migrations 00001–00020): the columns present are read once from
// information_schema, only known columns are selected (extra ones are ignored) and a known column that is missing is
// selected as NULL. Ids are compared in byte order: Postgres' uuid order is the order of its lower-case text, and
// text ids (buckets) are ordered with COLLATE "C", the order the service's ledger uses.
import { nhostTokenHash, refreshTokenId } from "./user-bundles.mjs";

export const PAGE = 100;

const USER_COLUMNS = [
  "id",
  "created_at",
  "updated_at",
  "last_seen",
  "disabled",
  "display_name",
  "avatar_url",
  "locale",
  "email",
  "phone_number",
  "email_verified",
  "phone_number_verified",
  "new_email",
  "password_hash",
  "default_role",
  "is_anonymous",
  "totp_secret",
  "active_mfa_type",
  "ticket",
  "ticket_expires_at",
  "metadata",
];
const BUCKET_COLUMNS = [
  "id",
  "download_expiration",
  "min_upload_file_size",
  "max_upload_file_size",
  "cache_control",
  "presigned_urls_enabled",
  "created_at",
  "updated_at",
];
const FILE_COLUMNS = [
  "id",
  "created_at",
  "updated_at",
  "bucket_id",
  "name",
  "size",
  "mime_type",
  "etag",
  "is_uploaded",
  "uploaded_by_user_id",
  "metadata",
];

/** postgres://user:secret@host/db → postgres://user:***@host/db, for messages. */
export function redactUrl(url) {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(the database URL given)";
  }
}

/**
 * Connects, or fails with one line (exit 1) when the database does not answer within 10 s. `pg` is loaded here, not
 * at the top of admin.mjs, so that the other admin commands never need it. `Db`: the reader (import-supabase's
 * extends this one), `system`: the name its messages use.
 */
export async function connectNhost(databaseUrl, fail, { system = "Nhost", Db = NhostDb } = {}) {
  const { default: pg } = await import("pg");
  // `timestamp without time zone` columns (none in Nhost's own migrations, but an app may have altered one) are UTC.
  const types = {
    getTypeParser: (oid, format) =>
      oid === 1114 ? (text) => new Date(`${text.replace(" ", "T")}Z`) : pg.types.getTypeParser(oid, format),
  };
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 10_000, types });
  // A connection lost later surfaces as the failing query's error; this keeps the 'error' event from crashing first.
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (error) {
    fail(
      `cannot connect to the ${system} database at ${redactUrl(databaseUrl)}: ${error.message || error.code}`,
    );
  }
  const nhost = new Db(client);
  await nhost.discover();
  if (!nhost.has("auth.users"))
    fail(`no auth.users table at ${redactUrl(databaseUrl)}: is this a ${system} project's database?`);
  return nhost;
}

export class NhostDb {
  constructor(client) {
    this.client = client;
    /** "schema.table" → Set of its columns. */
    this.columns = new Map();
  }

  async discover() {
    const { rows } = await this.client.query(
      `SELECT table_schema, table_name, column_name FROM information_schema.columns
       WHERE table_schema IN ('auth', 'storage')`,
    );
    for (const row of rows) {
      const table = `${row.table_schema}.${row.table_name}`;
      if (!this.columns.has(table)) this.columns.set(table, new Set());
      this.columns.get(table).add(row.column_name);
    }
    // Nhost Auth 00006–00008 named the security keys `user_authenticators`; before 00006 there were none.
    this.securityKeys = this.has("auth.user_security_keys")
      ? "auth.user_security_keys"
      : this.has("auth.user_authenticators")
        ? "auth.user_authenticators"
        : null;
    // Before 00015 the token itself was the key (`refresh_token`); 00011–00014 add a generated refresh_token_hash.
    // This service's Postgres mirror keeps its bookkeeping here (src/mirror/versions.ts): its rows are recognised.
    const [mirror] = await this.query(
      "SELECT to_regclass('edge_auth_mirror.versions') IS NOT NULL AS present",
    );
    this.mirrorVersions = mirror?.present === true;
    const tokens = this.columns.get("auth.refresh_tokens");
    this.tokenId = tokens?.has("id") ? "id" : tokens?.has("refresh_token") ? "refresh_token" : null;
  }

  has(table) {
    return this.columns.has(table);
  }

  hasColumn(table, column) {
    return this.columns.get(table)?.has(column) ?? false;
  }

  /** The select list of `names` on `table`: each present column by its name, each missing one as NULL. */
  select(table, names) {
    return names.map((name) => (this.hasColumn(table, name) ? `"${name}"` : `NULL AS "${name}"`)).join(", ");
  }

  async query(text, params) {
    return (await this.client.query(text, params)).rows;
  }

  /**
   * Pages of a table's rows in id order: each page an array of at most `limit` rows. `text`: ids are text (compared
   * in byte order), else uuids.
   */
  async *pages(table, selectList, { limit = PAGE, text = false } = {}) {
    // Qualified, so that ORDER BY means the table's column and never an output column of the same name (ids()
    // selects `id::text AS id`, which would sort by the database's text collation).
    const id = text ? `${table}.id COLLATE "C"` : `${table}.id`;
    let after = null;
    for (;;) {
      const rows = await this.query(
        `SELECT ${selectList} FROM ${table} ${after === null ? "" : `WHERE ${id} > $1`} ORDER BY ${id} LIMIT ${limit}`,
        after === null ? [] : [after],
      );
      if (rows.length > 0) yield rows;
      if (rows.length < limit) return;
      after = rows[rows.length - 1].id;
    }
  }

  /** Every id of a table, one at a time, ascending in byte order: one side of the merge with the service's ledger. */
  async *ids(table, { text = false } = {}) {
    if (!this.has(table)) return;
    for await (const page of this.pages(table, "id::text AS id", { limit: 1000, text })) {
      for (const row of page) yield row.id;
    }
  }

  users() {
    return this.pages("auth.users", this.select("auth.users", USER_COLUMNS));
  }

  /**
   * Of these users' or files' ids, those whose row this service's Postgres mirror wrote last (docs/hasura.md): the
   * mirror records each write in `edge_auth_mirror.versions` in the same transaction, `applied_at` its time, and a row
   * nothing changed since has an `updated_at` no later (the mirror writes the service's own; Nhost's trigger, where
   * it runs, stamps the transaction's time, which is `applied_at`). Nhost Auth changing the row afterwards stamps a
   * later time: then it is Nhost's change, read as one. Empty when the database holds no mirror.
   */
  async mirrored(kind, ids) {
    if (!this.mirrorVersions || ids.length === 0) return new Set();
    const table = kind === "user" ? "auth.users" : "storage.files";
    const rows = await this.query(
      `SELECT v.row_id FROM edge_auth_mirror.versions v JOIN ${table} r ON r.id::text = v.row_id
       WHERE v.row_kind = $1 AND NOT v.deleted AND v.row_id = ANY($2::text[]) AND r.updated_at <= v.applied_at`,
      [kind, ids.map(String)],
    );
    return new Set(rows.map((row) => row.row_id));
  }

  buckets() {
    if (!this.has("storage.buckets")) return emptyPages();
    return this.pages("storage.buckets", this.select("storage.buckets", BUCKET_COLUMNS), { text: true });
  }

  files() {
    if (!this.has("storage.files")) return emptyPages();
    return this.pages("storage.files", this.select("storage.files", FILE_COLUMNS));
  }

  /**
   * Everything of a page of users: their roles, providers, security keys and live refresh tokens (expired ones are
   * only counted: nobody can use them any more). One query per table, `user_id = ANY($1)`.
   */
  /**
   * Large tables read by user id that have no index starting with `user_id` (Nhost's schema has none on refresh
   * tokens, providers or keys): each page of users then scans them whole. Read from the catalog, so nothing is
   * written to Nhost's database; the command suggests the index for a copy it imports from.
   */
  async unindexedByUser() {
    const tables = ["auth.refresh_tokens", "auth.user_providers", this.securityKeys].filter(
      (t) => t && this.has(t),
    );
    const rows = await this.query(
      `SELECT n.nspname || '.' || c.relname AS name
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname || '.' || c.relname = ANY($1::text[]) AND c.reltuples > 50000
         AND NOT EXISTS (
           SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
           WHERE i.indrelid = c.oid AND a.attname = 'user_id')`,
      [tables],
    );
    return rows.map((row) => row.name);
  }

  async related(userIds) {
    const ids = [userIds];
    const roles = this.has("auth.user_roles")
      ? await this.query(
          `SELECT user_id, role FROM auth.user_roles WHERE user_id = ANY($1::uuid[]) ORDER BY role`,
          ids,
        )
      : [];
    const providers = this.has("auth.user_providers")
      ? await this.query(
          `SELECT ${this.select("auth.user_providers", ["id", "user_id", "provider_id", "provider_user_id", "created_at", "updated_at"])}
           FROM auth.user_providers WHERE user_id = ANY($1::uuid[]) ORDER BY id`,
          ids,
        )
      : [];
    const securityKeys = this.securityKeys
      ? await this.query(
          `SELECT ${this.select(this.securityKeys, ["id", "user_id", "credential_id", "credential_public_key", "transports", "nickname"])},
             counter::text AS counter
           FROM ${this.securityKeys} WHERE user_id = ANY($1::uuid[]) ORDER BY id`,
          ids,
        )
      : [];
    let refreshTokens = [];
    let expiredTokens = 0;
    if (this.tokenId) {
      const table = "auth.refresh_tokens";
      const hash = this.hasColumn(table, "refresh_token_hash") ? "refresh_token_hash::text" : "NULL";
      // One scan for live and expired alike: without an index on user_id (Nhost's schema has none) each scan reads
      // the whole table, so two would double the cost of every page (docs/performance.md, "Import from Nhost").
      const rows = await this.query(
        `SELECT "${this.tokenId}"::text AS id, user_id, created_at, expires_at, ${hash} AS hash,
           ${this.select(table, ["metadata", "type"])}, expires_at > now() AS live
         FROM ${table} WHERE user_id = ANY($1::uuid[]) ORDER BY 1`,
        ids,
      );
      refreshTokens = rows.filter((row) => row.live);
      expiredTokens = rows.length - refreshTokens.length;
      // Nhost before 00011 kept no hash: the client's token is the key, its hash is computed here as Nhost would.
      for (const row of refreshTokens) {
        delete row.live;
        row.hash ??= nhostTokenHash(row.id);
      }
    }
    return { roles, providers, securityKeys, refreshTokens, expiredTokens };
  }

  /**
   * Rows whose user does not exist (Nhost's foreign keys cascade, so only a database edited by hand has them): pages
   * of {table, id}. Expired refresh tokens are not listed: nothing would carry them anyway.
   */
  async *dangling() {
    const tables = [
      ["auth.user_providers", "id", ""],
      [this.securityKeys, "id", ""],
      ["auth.refresh_tokens", this.tokenId, "AND t.expires_at > now()"],
    ];
    for (const [table, id, live] of tables) {
      if (!table || !id || !this.has(table)) continue;
      const hash = table === "auth.refresh_tokens" && this.hasColumn(table, "refresh_token_hash");
      let after = null;
      for (;;) {
        const rows = await this.query(
          `SELECT t."${id}"::text AS id${hash ? ", t.refresh_token_hash::text AS hash" : ""}
           FROM ${table} t LEFT JOIN auth.users u ON u.id = t.user_id
           WHERE u.id IS NULL ${live} ${after === null ? "" : `AND t."${id}" > $1`}
           ORDER BY t."${id}" LIMIT 1000`,
          after === null ? [] : [after],
        );
        // A token that is its own id (Nhost before 00015) is named by its derived id, never by the token itself.
        const named = (row) =>
          table === "auth.refresh_tokens"
            ? refreshTokenId(row.id, row.hash ?? nhostTokenHash(row.id))
            : row.id;
        if (rows.length > 0) yield rows.map((row) => ({ table, id: named(row) }));
        if (rows.length < 1000) break;
        after = rows[rows.length - 1].id;
      }
    }
  }

  close() {
    this.closed ??= this.client.end().catch(() => {});
    return this.closed;
  }
}

async function* emptyPages() {}
