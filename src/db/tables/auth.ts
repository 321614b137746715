import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * The core's tables: users, their sessions and refresh tokens, link tickets, PATs, MFA, WebAuthn keys, known
 * devices. Every table is described in docs/storage-schema.md; times are Unix milliseconds.
 */

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    lastSeen: integer("last_seen"),
    disabled: integer("disabled", { mode: "boolean" }).notNull().default(false),
    /**
     * A timed ban (GoTrue's `ban_duration`): `disabled` until this time, when the every-minute cron lifts it
     * (src/auth/housekeeping.ts). Null: not banned, or disabled for good.
     */
    bannedUntil: integer("banned_until"),
    /**
     * A soft deletion (GoTrue's `deleteUser(id, true)`, src/admin/users.ts `softDeleteUser`): the row is kept, disabled,
     * its email and phone replaced by hashes and its credentials gone. Null: not deleted.
     */
    deletedAt: integer("deleted_at"),
    displayName: text("display_name").notNull().default(""),
    avatarUrl: text("avatar_url").notNull().default(""),
    locale: text("locale").notNull(),
    /** Lower-cased; unique among non-null values. */
    email: text("email").unique(),
    emailVerified: integer("email_verified", { mode: "boolean" }).notNull().default(false),
    /**
     * When the account's address was first proven (null: never, or before this column existed). A password reset
     * drops security keys and TOTP from before it (credential-reset.ts `dropFactorsFromBeforeProof`).
     */
    emailVerifiedAt: integer("email_verified_at"),
    newEmail: text("new_email"),
    phoneNumber: text("phone_number").unique(),
    phoneNumberVerified: integer("phone_number_verified", { mode: "boolean" }).notNull().default(false),
    /** PHC string (argon2id) or an imported bcrypt hash; null for users without a password. */
    passwordHash: text("password_hash"),
    defaultRole: text("default_role").notNull(),
    /** JSON array of role names; always contains defaultRole. */
    roles: text("roles", { mode: "json" }).$type<string[]>().notNull(),
    isAnonymous: integer("is_anonymous", { mode: "boolean" }).notNull().default(false),
    activeMfaType: text("active_mfa_type"),
    /** TOTP secret, AES-256-GCM under `AUTH_ENCRYPTION_KEY`; set by generate, active once `active_mfa_type` is totp. */
    totpSecret: text("totp_secret"),
    /** The newest TOTP time step accepted: a code of that step or older is refused (RFC 6238 §5.2, no replay). */
    totpLastStep: integer("totp_last_step"),
    /** When TOTP was last activated (null while it is off). */
    totpEnabledAt: integer("totp_enabled_at"),
    /**
     * When the user last chose a new password (change, reset, set on an anonymous account). A rehash of the same
     * password at sign-in leaves it alone, which is how the `password.changed` event (migration 0020) tells them apart.
     */
    passwordChangedAt: integer("password_changed_at"),
    /**
     * When the account's credentials last changed here (contract supabase.md §6): a password, sign-out of all
     * sessions, MFA, a security key, a PAT, a linked provider or the email address. An old system's access token
     * issued before it is refused (src/http/imported-tokens.ts). Null: nothing changed since this column existed.
     */
    credentialsChangedAt: integer("credentials_changed_at"),
    metadata: text("metadata", { mode: "json" })
      .$type<Record<string, unknown>>()
      .notNull()
      .default(sql`'{}'`),
    /**
     * GoTrue's `app_metadata` beyond `provider`/`providers` (contract supabase.md §2): what the service role set
     * through the Supabase face's admin namespace. Null: nothing set. Never a client's to write.
     */
    appMetadata: text("app_metadata", { mode: "json" }).$type<Record<string, unknown>>(),
    /**
     * Where the user's last few sign-ins were (src/auth/recent-places.ts: minute, coordinates, country, a few dozen
     * bytes each), written in the same statement as `last_seen` when a session starts, so it costs no row of its own:
     * the risk of a sign-in from the other side of the world an hour later (src/risk/). Null: none known.
     */
    recentPlaces: text("recent_places"),
  },
  (t) => [
    index("users_created_at").on(t.createdAt),
    index("users_banned_until").on(t.bannedUntil).where(sql`banned_until IS NOT NULL`),
  ],
);

/** One row per sign-in: the "token family" whose refresh tokens rotate. Its id is the wire `refreshTokenId`. */
export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    userAgent: text("user_agent"),
    /**
     * The six hex digits every refresh token of the session starts with, naming its `SessionFamilies` object. Null
     * for sessions from before, until their next refresh (the legacy drawer, src/token-families/legacy/).
     */
    locator: text("locator"),
    /** How the session began (`email-password`, `provider:github`, …: src/auth/sign-in/method.ts, named by each flow); null if unknown. */
    method: text("method"),
    /**
     * The organization the session acts in (contract organizations.md §1), switched with `POST /token {orgId}`; its
     * tokens carry it while the user is still a member. Null: none.
     */
    orgId: text("org_id"),
    /**
     * RFC 9449 thumbprint of the DPoP key the session is bound to (a sign-in or refresh that carried a proof): its
     * refreshes must prove that key, and its access tokens carry it as `cnf.jkt`. Null: bearer tokens.
     */
    dpopJkt: text("dpop_jkt"),
    /** The client address the session began from (contract §13 session list); null for sessions from before. */
    ip: text("ip"),
    /** Where that address is, roughly (`request.cf`: city, region, country), as the session list shows it; null if unknown. */
    place: text("place"),
    /**
     * A first-factor session of a user with a verified second factor (GoTrue's `aal1`, given only by the Supabase
     * face, which steps it up with `mfa.verify`): the Nhost face refreshes none of it, and its tokens carry no Hasura
     * claims (docs/decisions.md, "Issue 43: MFA").
     */
    secondFactorPending: integer("second_factor_pending", { mode: "boolean" }).notNull().default(false),
    /**
     * An impersonation (contract operators.md §1): who acts as the user (`act.sub` of its tokens, RFC 8693 §4.1), as
     * the operator named themself. Null: the user's own session.
     */
    actor: text("actor"),
    /** An impersonation's hard end (ms): no refresh past it, no token outlives it. Null: the sliding lifetime only. */
    endsAt: integer("ends_at"),
  },
  (t) => [
    index("sessions_user_id").on(t.userId),
    index("sessions_expires_at").on(t.expiresAt),
    index("sessions_user_org").on(t.userId, t.orgId),
    // A refresh reads its session by the token's locator, beside the rotation (src/auth/sessions/read-beside.ts).
    index("sessions_locator").on(t.locator).where(sql`locator IS NOT NULL`),
  ],
);

/**
 * Refresh tokens known only by their SHA-256 (src/token-families/legacy/): those sessions handed out before tokens
 * carried their family's locator, and those imported from Nhost (src/move-in/, Nhost's hash without its `\x`), so such
 * a token finds its session once more and moves onto a family. Written only by the import (docs/operations.md).
 */
export const refreshTokens = sqliteTable(
  "refresh_tokens",
  {
    tokenHash: text("token_hash").primaryKey(),
    sessionId: text("session_id")
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [
    index("refresh_tokens_session_id").on(t.sessionId),
    index("refresh_tokens_expires_at").on(t.expiresAt),
  ],
);

/** Single-use link tickets (`verifyEmail:`, …). One live ticket per user and type; only the hash is kept. */
export const tickets = sqliteTable(
  "tickets",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    type: text("type").notNull(),
    ticketHash: text("ticket_hash").notNull().unique(),
    expiresAt: integer("expires_at").notNull(),
    /** PKCE S256 challenge of the app that asked for the mail: the link then redirects with a code, not a token. */
    codeChallenge: text("code_challenge"),
  },
  (t) => [primaryKey({ columns: [t.userId, t.type] })],
);

/**
 * Exchange codes: one-time codes that a followed mailed link hands to a PKCE app instead of a refresh token
 * (`POST /token/exchange`). Only the hash is kept; claimed by one `UPDATE … RETURNING` that renames it to a key of
 * the redemption's own (`taken:<uuid>`), deleted after the answer (src/auth/links/exchange-codes.ts). The table keeps
 * the name it had before the OAuth2 server's authorization codes (`oauth2_codes`) existed.
 */
export const linkExchangeCodes = sqliteTable(
  "authorization_codes",
  {
    codeHash: text("code_hash").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    codeChallenge: text("code_challenge").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("authorization_codes_expires_at").on(t.expiresAt)],
);

/** Personal access tokens: long-lived secrets for scripts, stored as SHA-256; never accepted as refresh tokens. */
export const personalAccessTokens = sqliteTable(
  "personal_access_tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull().unique(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    metadata: text("metadata", { mode: "json" })
      .$type<Record<string, unknown>>()
      .notNull()
      .default(sql`'{}'`),
  },
  (t) => [index("personal_access_tokens_user_id").on(t.userId)],
);

/** `mfaTotp:` tickets of the sign-in second step: 5 minutes, a capped number of attempts, consumed on success. */
export const mfaTickets = sqliteTable(
  "mfa_tickets",
  {
    ticketHash: text("ticket_hash").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    expiresAt: integer("expires_at").notNull(),
    attempts: integer("attempts").notNull().default(0),
  },
  (t) => [index("mfa_tickets_expires_at").on(t.expiresAt)],
);

/**
 * The user's second factors as a list (contract supabase.md §2, "Factors"): each with its own id and friendly name.
 * A `phone` factor keeps its number and its status here. The one `totp` factor's secret stays on the user's row
 * (`users.totp_secret`, which the Nhost face and everything before it read); this row names it while `secret` is
 * still that same ciphertext, and its status is the user's `active_mfa_type` (src/auth/mfa/factors.ts).
 */
export const mfaFactors = sqliteTable(
  "mfa_factors",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** `totp`, `phone` or `webauthn` (GoTrue's `factor_type`). */
    factorType: text("factor_type").notNull(),
    friendlyName: text("friendly_name"),
    /** `unverified` or `verified`; for `totp` the user's row decides (above). */
    status: text("status").notNull().default("unverified"),
    /** A phone factor's number (E.164). */
    phone: text("phone"),
    /**
     * A TOTP factor's secret as it was stored on the user's row (AES-256-GCM), to tell it is still the current one; a
     * verified `webauthn` factor's key as JSON (credential id, public key, signature counter: nothing secret).
     */
    secret: text("secret"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("mfa_factors_user_id").on(t.userId)],
);

/** One-time recovery codes, usable in place of a TOTP code; HMAC under `AUTH_ENCRYPTION_KEY`, never plain. */
export const mfaRecoveryCodes = sqliteTable(
  "mfa_recovery_codes",
  {
    codeHash: text("code_hash").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
  },
  (t) => [index("mfa_recovery_codes_user_id").on(t.userId)],
);

/** WebAuthn credentials (security keys, passkeys): public keys only; the signature counter guards against clones. */
export const securityKeys = sqliteTable(
  "security_keys",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** base64url credential id, as the browser reports it. */
    credentialId: text("credential_id").notNull().unique(),
    /** base64url COSE public key. */
    publicKey: text("public_key").notNull(),
    counter: integer("counter").notNull().default(0),
    transports: text("transports", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    nickname: text("nickname"),
    createdAt: integer("created_at").notNull(),
    /**
     * A passkey made by an upgrade (`POST /user/webauthn/add` with `upgrade`, conditional create after a first-factor
     * sign-in): the session it was made in. Unique, so a session makes at most one (docs/passkeys.md). Null: a key the
     * user added with user presence, as every key before this column.
     */
    upgradeSessionId: text("upgrade_session_id").unique(),
    /**
     * When an upgrade's passkey was first used with user verification (WebAuthn §6.1 flag UV). Until then its
     * sign-ins are not phishing-resistant (`phr`) and it elevates nothing: it was made without the user's gesture.
     */
    userVerifiedAt: integer("user_verified_at"),
    /**
     * The key's last sign-in or elevation, accurate to the hour (as a session's `last_used_at`): written with the
     * signature counter when it moves, else at most once an hour, after the answer. Null: not used since the column.
     */
    lastUsedAt: integer("last_used_at"),
    /**
     * WebAuthn §6.1 flag BE (backup eligible: a passkey a password manager may sync), as registered; BE never
     * changes (§6.1.3). Null: a key from before the column, or imported, not used since (src/auth/webauthn/backup-state.ts).
     */
    backupEligible: integer("backup_eligible", { mode: "boolean" }),
    /** WebAuthn §6.1 flag BS (backed up), as the latest registration or assertion said. Null as above. */
    backupState: integer("backup_state", { mode: "boolean" }),
  },
  (t) => [index("security_keys_user_id").on(t.userId)],
);

export type UserRow = typeof users.$inferSelect;
export type NewUserRow = typeof users.$inferInsert;

/**
 * The devices a user signed in from (contract §13 new-device notice), by a keyed hash of the device's cookie, so a
 * sign-in from one not listed mails the user. On the user's shard.
 */
export const userDevices = sqliteTable(
  "user_devices",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    deviceHash: text("device_hash").notNull(),
    firstSeenAt: integer("first_seen_at").notNull(),
    lastSeenAt: integer("last_seen_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.deviceHash] })],
);
