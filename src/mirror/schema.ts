import { inTransaction, type Sql } from "./postgres";

/**
 * The tables the mirror writes, as Nhost's own migrations leave them (test/fixtures/nhost/: auth 00001–00019,
 * storage 000001–000005): the same schemas, table, column and constraint names, types, defaults and foreign keys, so
 * that Hasura's metadata, the app's relationships and its foreign keys (`posts.author_id → auth.users.id`) work
 * unchanged. Only what is missing is created; nothing is ever dropped or recreated, so an existing Nhost database and
 * the app's own tables keep their rows and references.
 *
 * Left out on purpose: Nhost's `updated_at` triggers (the mirror writes the service's own `updated_at`, which such a
 * trigger would overwrite with the time of the write) and its tables the mirror never writes (refresh tokens, security
 * keys, provider requests). Where a Nhost database already has those triggers, they stay and win.
 */
const TABLES = (emailBase: string) => [
  "CREATE SCHEMA IF NOT EXISTS auth",
  "CREATE SCHEMA IF NOT EXISTS storage",
  "CREATE SCHEMA IF NOT EXISTS edge_auth_mirror",
  // CREATE DOMAIN has no IF NOT EXISTS.
  `DO $$ BEGIN
     IF to_regtype('auth.email') IS NULL THEN
       CREATE DOMAIN auth.email AS ${emailBase} CHECK (value ~ '^[a-zA-Z0-9.!#$%&''*+/=?^_\`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$');
     END IF;
   END $$`,
  "CREATE TABLE IF NOT EXISTS auth.roles (role text NOT NULL PRIMARY KEY)",
  "CREATE TABLE IF NOT EXISTS auth.providers (id text NOT NULL PRIMARY KEY)",
  `CREATE TABLE IF NOT EXISTS auth.users (
     id uuid DEFAULT gen_random_uuid() NOT NULL PRIMARY KEY,
     created_at timestamp with time zone DEFAULT now() NOT NULL,
     updated_at timestamp with time zone DEFAULT now() NOT NULL,
     last_seen timestamp with time zone,
     disabled boolean DEFAULT false NOT NULL,
     display_name text DEFAULT '' NOT NULL,
     avatar_url text DEFAULT '' NOT NULL,
     locale varchar(3) NOT NULL,
     email auth.email UNIQUE,
     phone_number text UNIQUE,
     password_hash text,
     email_verified boolean DEFAULT false NOT NULL,
     phone_number_verified boolean DEFAULT false NOT NULL,
     new_email auth.email,
     otp_method_last_used text,
     otp_hash text,
     otp_hash_expires_at timestamp with time zone DEFAULT now() NOT NULL,
     default_role text DEFAULT 'user' NOT NULL,
     is_anonymous boolean DEFAULT false NOT NULL,
     totp_secret text,
     active_mfa_type text,
     ticket text,
     ticket_expires_at timestamp with time zone DEFAULT now() NOT NULL,
     metadata jsonb,
     webauthn_current_challenge text,
     CONSTRAINT fk_default_role FOREIGN KEY (default_role) REFERENCES auth.roles (role) ON UPDATE CASCADE ON DELETE RESTRICT,
     CONSTRAINT active_mfa_types_check CHECK (active_mfa_type = 'totp' OR active_mfa_type = 'sms')
   )`,
  // Columns later Nhost migrations added (00002, 00006), for a database an older Nhost left behind.
  "ALTER TABLE auth.users ADD COLUMN IF NOT EXISTS metadata jsonb",
  "ALTER TABLE auth.users ADD COLUMN IF NOT EXISTS webauthn_current_challenge text",
  `CREATE TABLE IF NOT EXISTS auth.user_roles (
     id uuid DEFAULT gen_random_uuid() NOT NULL PRIMARY KEY,
     created_at timestamp with time zone DEFAULT now() NOT NULL,
     user_id uuid NOT NULL,
     role text NOT NULL,
     UNIQUE (user_id, role),
     CONSTRAINT fk_user FOREIGN KEY (user_id) REFERENCES auth.users (id) ON UPDATE CASCADE ON DELETE CASCADE,
     CONSTRAINT fk_role FOREIGN KEY (role) REFERENCES auth.roles (role) ON UPDATE CASCADE ON DELETE RESTRICT
   )`,
  // 00017 dropped the (user_id, provider_id) pair: a user may hold several identities at one provider.
  `CREATE TABLE IF NOT EXISTS auth.user_providers (
     id uuid DEFAULT gen_random_uuid() NOT NULL PRIMARY KEY,
     created_at timestamp with time zone DEFAULT now() NOT NULL,
     updated_at timestamp with time zone DEFAULT now() NOT NULL,
     user_id uuid NOT NULL,
     access_token text NOT NULL,
     refresh_token text,
     provider_id text NOT NULL,
     provider_user_id text NOT NULL,
     UNIQUE (provider_id, provider_user_id),
     CONSTRAINT fk_user FOREIGN KEY (user_id) REFERENCES auth.users (id) ON UPDATE CASCADE ON DELETE CASCADE,
     CONSTRAINT fk_provider FOREIGN KEY (provider_id) REFERENCES auth.providers (id) ON UPDATE CASCADE ON DELETE RESTRICT
   )`,
  `CREATE TABLE IF NOT EXISTS storage.buckets (
     id text NOT NULL PRIMARY KEY,
     created_at timestamp with time zone DEFAULT now() NOT NULL,
     updated_at timestamp with time zone DEFAULT now() NOT NULL,
     download_expiration int NOT NULL DEFAULT 30,
     min_upload_file_size int NOT NULL DEFAULT 1,
     max_upload_file_size int NOT NULL DEFAULT 50000000,
     cache_control text DEFAULT 'max-age=3600',
     presigned_urls_enabled boolean NOT NULL DEFAULT TRUE,
     CONSTRAINT download_expiration_valid_range CHECK (download_expiration >= 1 AND download_expiration <= 604800)
   )`,
  // No foreign key to auth.users: storage 000003 removed it (files outlive their uploader).
  `CREATE TABLE IF NOT EXISTS storage.files (
     id uuid DEFAULT gen_random_uuid() NOT NULL PRIMARY KEY,
     created_at timestamp with time zone DEFAULT now() NOT NULL,
     updated_at timestamp with time zone DEFAULT now() NOT NULL,
     bucket_id text NOT NULL DEFAULT 'default',
     name text,
     size int,
     mime_type text,
     etag text,
     is_uploaded boolean DEFAULT FALSE,
     uploaded_by_user_id uuid,
     metadata jsonb,
     CONSTRAINT fk_bucket FOREIGN KEY (bucket_id) REFERENCES storage.buckets (id) ON UPDATE CASCADE ON DELETE CASCADE
   )`,
  'ALTER TABLE "storage"."files" ADD COLUMN IF NOT EXISTS "metadata" JSONB',
  // The mirror's own bookkeeping: which change each mirrored row reflects (versions.ts).
  `CREATE TABLE IF NOT EXISTS edge_auth_mirror.versions (
     row_kind text NOT NULL,
     row_id text NOT NULL,
     subject text NOT NULL,
     sequence bigint NOT NULL,
     deleted boolean NOT NULL DEFAULT false,
     event_at timestamp with time zone NOT NULL,
     applied_at timestamp with time zone NOT NULL DEFAULT now(),
     PRIMARY KEY (row_kind, row_id)
   )`,
];

/** Any constant: consumers and a resync starting together take turns creating the tables. */
const SCHEMA_LOCK = 4_731_925_006;

/**
 * Whether this isolate has seen the tables in place. Plain settled data (a boolean, never a promise): a later batch
 * skips the check; an error anywhere resets it, so tables dropped by hand come back on the next attempt.
 */
let ready = false;

export function forgetSchema(): void {
  ready = false;
}

/** Creates what is missing of the mirror's tables; once per isolate, again after an error. */
export async function ensureSchema(sql: Sql): Promise<void> {
  if (ready) return;
  await inTransaction(sql, async () => {
    await sql.query("SELECT pg_advisory_xact_lock($1)", [SCHEMA_LOCK]);
    for (const statement of TABLES(await emailBaseType(sql))) await sql.query(statement);
  });
  ready = true;
}

/**
 * Nhost's `auth.email` is a domain over `citext` (addresses compare without case). Creating the extension needs a
 * privilege the mirror's role may lack (citext is a trusted extension since Postgres 13: the database owner may): then
 * the domain is over `text`, and the service's addresses, already lower-cased, compare the same.
 */
async function emailBaseType(sql: Sql): Promise<string> {
  await sql.query("SAVEPOINT citext");
  try {
    await sql.query("CREATE EXTENSION IF NOT EXISTS citext WITH SCHEMA public");
    await sql.query("RELEASE SAVEPOINT citext");
  } catch {
    await sql.query("ROLLBACK TO SAVEPOINT citext");
  }
  const { rows } = await sql.query<{ citext: string | null }>(
    "SELECT to_regtype('public.citext')::text AS citext",
  );
  return rows[0]?.citext ? "public.citext" : "text";
}
