// Reading a Supabase project's `auth` schema (contract supabase.md §5) with the Nhost reader's machinery: one `pg`
// Client, keyset pages by id, columns found in information_schema first (GoTrue's schema changed across its 70-odd
// migrations: a known column that is missing is read as NULL, an unknown one is ignored). Each table group of a user
// has its reader here: users, identities, MFA factors, one-time tokens; sessions and their refresh tokens in
// sessions.mjs. SSO and storage have readers of their own (sso.mjs, storage.mjs).
import { createHash } from "node:crypto";
import { NhostDb } from "../import-nhost/read-nhost.mjs";
import { readSessions } from "./sessions.mjs";

const USER_COLUMNS = [
  "id",
  "email",
  "encrypted_password",
  "email_confirmed_at",
  "confirmed_at",
  "invited_at",
  "confirmation_token",
  "confirmation_sent_at",
  "recovery_token",
  "recovery_sent_at",
  // GoTrue renamed `email_change_token` to `email_change_token_new` (2021) and added `…_current`.
  "email_change_token",
  "email_change_token_new",
  "email_change_token_current",
  "email_change_confirm_status",
  "email_change",
  "email_change_sent_at",
  "last_sign_in_at",
  "raw_app_meta_data",
  "raw_user_meta_data",
  "created_at",
  "updated_at",
  "phone",
  "phone_confirmed_at",
  "banned_until",
  "is_sso_user",
  "deleted_at",
  "is_anonymous",
];
const FACTOR_COLUMNS = [
  "id",
  "user_id",
  "friendly_name",
  "factor_type",
  "status",
  "secret",
  "phone",
  "web_authn_credential",
  "created_at",
  "updated_at",
];

/** A stable uuid for a row GoTrue keyed by something else (identities before 2023 were keyed by provider and subject). */
export function derivedId(...parts) {
  const bytes = createHash("sha256")
    .update(`edge-auth import-supabase ${parts.join("\n")}`)
    .digest();
  bytes[6] = (bytes[6] & 0x0f) | 0x80; // RFC 9562 version 8 (custom)
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 9562 variant
  const hex = bytes.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export class SupabaseDb extends NhostDb {
  users() {
    return this.pages("auth.users", this.select("auth.users", USER_COLUMNS));
  }

  /**
   * The users' ids as the removal pass compares them with the ledger: a user soft-deleted in Supabase (`deleted_at`)
   * counts as gone, so that one an earlier run imported is deleted here too.
   */
  async *ids(table, options) {
    if (table !== "auth.users" || !this.hasColumn(table, "deleted_at")) {
      yield* super.ids(table, options);
      return;
    }
    let after = null;
    for (;;) {
      const rows = await this.query(
        `SELECT id::text AS id FROM auth.users WHERE deleted_at IS NULL ${after === null ? "" : "AND id > $1"}
         ORDER BY id LIMIT 1000`,
        after === null ? [] : [after],
      );
      for (const row of rows) yield row.id;
      if (rows.length < 1000) return;
      after = rows[rows.length - 1].id;
    }
  }

  /** Everything of a page of users that is carried with them: identities, factors, passkeys, pending one-time tokens, sessions. */
  async related(userIds) {
    const ids = [userIds];
    const identities = this.has("auth.identities") ? await this.identities(ids) : [];
    const factors = this.has("auth.mfa_factors")
      ? await this.query(
          `SELECT ${this.select(
            "auth.mfa_factors",
            FACTOR_COLUMNS.filter((c) => !["factor_type", "status"].includes(c)),
          )},
             factor_type::text AS factor_type, status::text AS status
           FROM auth.mfa_factors WHERE user_id = ANY($1::uuid[]) ORDER BY id`,
          ids,
        )
      : [];
    // Before GoTrue added one_time_tokens (2024) the users' columns alone held the pending tokens.
    const oneTimeTokens = this.has("auth.one_time_tokens")
      ? await this.query(
          `SELECT user_id, token_type::text AS token_type, token_hash, relates_to, created_at
           FROM auth.one_time_tokens WHERE user_id = ANY($1::uuid[]) ORDER BY id`,
          ids,
        )
      : null;
    // GoTrue's passkeys (2026): first-factor keys, the core's security keys.
    const passkeys = this.has("auth.webauthn_credentials")
      ? await this.query(
          `SELECT id::text AS id, user_id::text AS user_id, credential_id, public_key, sign_count, transports,
             friendly_name, created_at
           FROM auth.webauthn_credentials WHERE user_id = ANY($1::uuid[]) ORDER BY id`,
          ids,
        )
      : [];
    const { sessions, tokens: sessionTokens } = await readSessions(this, userIds);
    return { identities, factors, oneTimeTokens, passkeys, sessions, sessionTokens };
  }

  /**
   * Identities with an id of their own: GoTrue's since 2023 (`id uuid`, the subject in `provider_id`); before, `id`
   * was the subject itself, so the id carried is derived from provider and subject (the same on every run).
   */
  async identities(ids) {
    const modern = this.hasColumn("auth.identities", "provider_id");
    const rows = await this.query(
      `SELECT id::text AS id, ${modern ? "provider_id" : "id::text AS provider_id"}, user_id, provider,
         ${this.select("auth.identities", ["identity_data", "created_at", "updated_at"])}
       FROM auth.identities WHERE user_id = ANY($1::uuid[]) ORDER BY provider, 2`,
      ids,
    );
    return rows.map((row) => (modern ? row : { ...row, id: derivedId(row.provider, row.provider_id) }));
  }
}
