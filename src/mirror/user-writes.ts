import type { Sql } from "./postgres";
import type { UserRow } from "./rows";

/**
 * Writes of `auth.users`, `auth.user_roles`, `auth.user_providers` and the `auth.roles` / `auth.providers` they refer
 * to. Set-based, and one statement for all five tables (data-modifying CTEs; the foreign keys are checked at the end of
 * the statement), so an event costs one round trip to the database and a resync page of two hundred users the same.
 * Rows are upserted in place, never deleted and inserted again: the app's foreign keys to `auth.users(id)` keep
 * holding, and Hasura's event triggers see an UPDATE for an update. Call it after the rows' versions were claimed, in
 * the same transaction: a statement of its own sees what a concurrent writer committed while the claim waited.
 */

const USER_COLUMNS = `id uuid, created_at timestamptz, updated_at timestamptz, last_seen timestamptz, disabled boolean,
  display_name text, avatar_url text, locale text, email text, phone_number text, email_verified boolean,
  phone_number_verified boolean, new_email text, default_role text, is_anonymous boolean, active_mfa_type text,
  metadata jsonb`;

// Never a secret column: they keep their default (NULL, or now() for the NOT NULL expiry columns) on insert and
// whatever they held on update. last_seen only moves forward: a sign-in may have been mirrored before this snapshot.
// access_token is NOT NULL in Nhost's table, where Nhost itself keeps a placeholder; the service has no provider token
// to mirror and would not mirror one: an empty string. Rows go in id order: concurrent writers lock them in one order.
const WRITE_USERS = `
  WITH roles AS (
    INSERT INTO auth.roles (role) SELECT unnest($2::text[]) ON CONFLICT DO NOTHING
  ), providers AS (
    INSERT INTO auth.providers (id) SELECT unnest($3::text[]) ON CONFLICT DO NOTHING
  ), users AS (
    INSERT INTO auth.users AS u (id, created_at, updated_at, last_seen, disabled, display_name, avatar_url, locale,
      email, phone_number, email_verified, phone_number_verified, new_email, default_role, is_anonymous,
      active_mfa_type, metadata)
    SELECT id, created_at, updated_at, last_seen, disabled, display_name, avatar_url, locale, email, phone_number,
      email_verified, phone_number_verified, new_email, default_role, is_anonymous, active_mfa_type, metadata
      FROM jsonb_to_recordset($1::jsonb) AS r(${USER_COLUMNS})
     ORDER BY id
    ON CONFLICT (id) DO UPDATE SET
      created_at = excluded.created_at, updated_at = excluded.updated_at,
      last_seen = GREATEST(u.last_seen, excluded.last_seen), disabled = excluded.disabled,
      display_name = excluded.display_name, avatar_url = excluded.avatar_url, locale = excluded.locale,
      email = excluded.email, phone_number = excluded.phone_number, email_verified = excluded.email_verified,
      phone_number_verified = excluded.phone_number_verified, new_email = excluded.new_email,
      default_role = excluded.default_role, is_anonymous = excluded.is_anonymous,
      active_mfa_type = excluded.active_mfa_type, metadata = excluded.metadata
  ), roles_gone AS (
    DELETE FROM auth.user_roles ur
     WHERE ur.user_id = ANY($4::uuid[])
       AND NOT EXISTS (SELECT 1 FROM unnest($5::uuid[], $6::text[]) AS p(user_id, role)
                        WHERE p.user_id = ur.user_id AND p.role = ur.role)
  ), roles_held AS (
    INSERT INTO auth.user_roles (user_id, role) SELECT * FROM unnest($5::uuid[], $6::text[])
    ON CONFLICT (user_id, role) DO NOTHING
  ), identities_gone AS (
    DELETE FROM auth.user_providers WHERE user_id = ANY($4::uuid[]) AND NOT (id = ANY($8::uuid[])) RETURNING 1
  )
  INSERT INTO auth.user_providers (id, created_at, updated_at, user_id, access_token, provider_id, provider_user_id)
  SELECT id, created_at, updated_at, user_id, '', provider_id, provider_user_id
    FROM jsonb_to_recordset($7::jsonb) AS p(id uuid, created_at timestamptz, updated_at timestamptz, user_id uuid,
         provider_id text, provider_user_id text)
    -- Counting the deleted rows runs the deletion first: an account unlinked and linked again has a new row id for
    -- the same (provider_id, provider_user_id), which Nhost's unique key allows once the old row is gone.
    CROSS JOIN (SELECT count(*) FROM identities_gone) AS gone
   ORDER BY id
  ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at, user_id = excluded.user_id,
    provider_id = excluded.provider_id, provider_user_id = excluded.provider_user_id`;

/** Upserts users with their roles and providers, replacing what the mirror held of both. */
export async function writeUsers(sql: Sql, users: UserRow[]): Promise<void> {
  if (users.length === 0) return;
  const roles = [...new Set(users.flatMap((user) => user.roles))].sort();
  const providers = [...new Set(users.flatMap((user) => user.providers.map((p) => p.provider_id)))].sort();
  const pairs = users.flatMap((user) => user.roles.map((role) => [user.id, role] as const));
  const identities = users.flatMap((user) => user.providers.map((p) => ({ ...p, user_id: user.id })));
  await sql.query(WRITE_USERS, [
    JSON.stringify(users.map(({ roles: _roles, providers: _providers, ...user }) => user)),
    roles,
    providers,
    users.map((user) => user.id),
    pairs.map(([id]) => id),
    pairs.map(([, role]) => role),
    JSON.stringify(identities),
    identities.map((p) => p.id),
  ]);
}

/** Deletes users with their roles and providers (Nhost's foreign keys would cascade; explicit, for a database without). */
export async function deleteUsers(sql: Sql, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql.query(
    `WITH roles AS (DELETE FROM auth.user_roles WHERE user_id = ANY($1::uuid[])),
          identities AS (DELETE FROM auth.user_providers WHERE user_id = ANY($1::uuid[]))
     DELETE FROM auth.users WHERE id = ANY($1::uuid[])`,
    [ids],
  );
}

/**
 * A sign-in moves `last_seen` (the service writes it with the session, outside the user events). Only forward, and
 * only on a row that exists: a sign-in delivered after the user's deletion changes nothing. The row's version records
 * the write's time too (`applied_at`, in the same statement): where Nhost's trigger stamps `updated_at`, the import
 * still tells the row for the mirror's (scripts/import-nhost/read-nhost.mjs `mirrored`).
 */
export async function touchLastSeen(sql: Sql, userId: string, at: string): Promise<void> {
  await sql.query(
    `WITH touched AS (
       UPDATE auth.users SET last_seen = $2
        WHERE id = $1 AND (last_seen IS NULL OR last_seen < $2::timestamptz) RETURNING id
     )
     UPDATE edge_auth_mirror.versions SET applied_at = now()
      WHERE row_kind = 'user' AND row_id IN (SELECT id::text FROM touched)`,
    [userId, at],
  );
}

/**
 * Makes room for the page a resync writes: a mirror that fell behind may still give an address, a phone number or a
 * provider identity to another row than the one D1 gives it to now (D1 holds each once), also within the page (two
 * users who swapped addresses). That stale holder is cleared, and its own page of the resync (or its deletion) writes
 * what it holds now; without this, the page's upsert would fail on Nhost's unique constraints at every attempt.
 */
export async function releaseTakenIdentities(sql: Sql, users: UserRow[]): Promise<void> {
  const emails = users.flatMap((user) => (user.email ? [[user.email.toLowerCase(), user.id] as const] : []));
  const phones = users.flatMap((user) => (user.phone_number ? [[user.phone_number, user.id] as const] : []));
  const identities = users.flatMap((user) => user.providers);
  // Separate statements: one statement may not update the same row twice (a row holding both a stale address and
  // a stale phone number).
  await sql.query(
    `UPDATE auth.users u SET email = NULL FROM unnest($1::text[], $2::uuid[]) AS o(email, owner)
      WHERE lower(u.email::text) = o.email AND u.id <> o.owner`,
    [emails.map(([email]) => email), emails.map(([, owner]) => owner)],
  );
  await sql.query(
    `UPDATE auth.users u SET phone_number = NULL FROM unnest($1::text[], $2::uuid[]) AS o(phone, owner)
      WHERE u.phone_number = o.phone AND u.id <> o.owner`,
    [phones.map(([phone]) => phone), phones.map(([, owner]) => owner)],
  );
  await sql.query(
    `DELETE FROM auth.user_providers up
      USING unnest($1::text[], $2::text[], $3::uuid[]) AS o(provider_id, provider_user_id, id)
      WHERE up.provider_id = o.provider_id AND up.provider_user_id = o.provider_user_id AND up.id <> o.id`,
    [
      identities.map((p) => p.provider_id),
      identities.map((p) => p.provider_user_id),
      identities.map((p) => p.id),
    ],
  );
}
