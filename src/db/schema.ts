import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** Every table is described in docs/storage-schema.md. Times are Unix milliseconds. */

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    lastSeen: integer("last_seen"),
    disabled: integer("disabled", { mode: "boolean" }).notNull().default(false),
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
    metadata: text("metadata", { mode: "json" })
      .$type<Record<string, unknown>>()
      .notNull()
      .default(sql`'{}'`),
  },
  (t) => [index("users_created_at").on(t.createdAt)],
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
    /** How the session began (`email-password`, `provider:github`, …: src/audit/events.ts `methodOf`); null if unknown. */
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
  },
  (t) => [
    index("sessions_user_id").on(t.userId),
    index("sessions_expires_at").on(t.expiresAt),
    index("sessions_user_org").on(t.userId, t.orgId),
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
 * (`POST /token/exchange`). Only the hash is kept; consumed by one `DELETE … RETURNING`. The table keeps the name it
 * had before the OAuth2 server's authorization codes (`oauth2_codes`) existed.
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
  },
  (t) => [index("security_keys_user_id").on(t.userId)],
);

/** Development transport of the mailer (`AUTH_DEV_MAILBOX=true`); never written in production. */
export const devMailbox = sqliteTable(
  "dev_mailbox",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    to: text("to").notNull(),
    subject: text("subject").notNull(),
    text: text("text").notNull(),
    html: text("html").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("dev_mailbox_to").on(t.to, t.id)],
);

export type UserRow = typeof users.$inferSelect;
export type NewUserRow = typeof users.$inferInsert;

/** Development transport of SMS (`AUTH_DEV_SMS=true`); never written in production. */
export const devSms = sqliteTable(
  "dev_sms",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    to: text("to").notNull(),
    body: text("body").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("dev_sms_to").on(t.to, t.id)],
);

/**
 * Who may do what in a bucket (storage contract §4): per action, `public`, `authenticated`, `owner` (the file's
 * uploader) or a list of roles.
 */
export type AccessRule = "public" | "authenticated" | "owner" | string[];
export interface BucketRules {
  upload: AccessRule;
  read: AccessRule;
  update: AccessRule;
  delete: AccessRule;
}

/** Storage buckets; `default` is created by a migration and always exists. */
export const buckets = sqliteTable("buckets", {
  id: text("id").primaryKey(),
  minUploadFileSize: integer("min_upload_file_size").notNull().default(1),
  maxUploadFileSize: integer("max_upload_file_size").notNull().default(50_000_000),
  cacheControl: text("cache_control").notNull().default("max-age=3600"),
  presignedUrlsEnabled: integer("presigned_urls_enabled", { mode: "boolean" }).notNull().default(true),
  downloadExpiration: integer("download_expiration").notNull().default(30),
  /** Patterns such as `image/*`; empty means any type. */
  allowedMimeTypes: text("allowed_mime_types", { mode: "json" })
    .$type<string[]>()
    .notNull()
    .default(sql`'[]'`),
  rules: text("rules", { mode: "json" }).$type<BucketRules>().notNull(),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/** File records; the bytes are in R2 under `object_key`. `is_uploaded` is false while an upload holds the id. */
export const files = sqliteTable(
  "files",
  {
    id: text("id").primaryKey(),
    bucketId: text("bucket_id")
      .notNull()
      .references(() => buckets.id),
    name: text("name").notNull(),
    size: integer("size").notNull(),
    mimeType: text("mime_type").notNull(),
    /** Quoted hex MD5 of the bytes, computed while they stream in. */
    etag: text("etag").notNull(),
    /**
     * Where the bytes are in R2: `<bucketId>/<id>` for an upload, `<bucketId>/<id>/<version>` after a replace (and
     * for an upload under `STORAGE_PERMISSIONS=hasura`, stored before Hasura is asked), so a replace never overwrites
     * bytes that another request may be reading or recording (docs/decisions.md).
     */
    objectKey: text("object_key").notNull().default(""),
    /** Pixel size of an image as shown (EXIF orientation applied), read from its header at upload; else null. */
    imageWidth: integer("image_width"),
    imageHeight: integer("image_height"),
    isUploaded: integer("is_uploaded", { mode: "boolean" }).notNull().default(false),
    uploadedByUserId: text("uploaded_by_user_id"),
    metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown> | null>(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("files_bucket_id").on(t.bucketId)],
);

export type BucketRow = typeof buckets.$inferSelect;
export type FileRow = typeof files.$inferSelect;

/**
 * OAuth 2.0 clients of the authorization server (contract §3.5, §10), managed through the admin API. The secret is
 * kept only as its SHA-256 (it is 256 random bits: no dictionary to attack); a public client has none.
 */
export const oauth2Clients = sqliteTable("oauth2_clients", {
  clientId: text("client_id").primaryKey(),
  secretHash: text("secret_hash"),
  clientName: text("client_name").notNull(),
  redirectUris: text("redirect_uris", { mode: "json" }).$type<string[]>().notNull(),
  scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
  grantTypes: text("grant_types", { mode: "json" }).$type<string[]>().notNull(),
  tokenEndpointAuthMethod: text("token_endpoint_auth_method")
    .$type<"client_secret_basic" | "client_secret_post" | "private_key_jwt" | "none">()
    .notNull(),
  /** Seconds. */
  accessTokenLifetime: integer("access_token_lifetime").notNull(),
  refreshTokenLifetime: integer("refresh_token_lifetime").notNull(),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
  /** RFC 7591 §2 / OIDC Registration: `web` or `native` (loopback redirect URIs match on any port, RFC 8252). */
  applicationType: text("application_type").$type<"web" | "native">().notNull().default("web"),
  /** How the client came to be: the admin API, dynamic registration (by a user or anyone), a metadata document. */
  registration: text("registration")
    .$type<"admin" | "authenticated" | "open" | "metadata-document">()
    .notNull()
    .default("admin"),
  /**
   * With `authenticated` registration: the user it belongs to, who lives in their shard (maybe another database):
   * no foreign key (migration 0022).
   */
  registeredByUserId: text("registered_by_user_id"),
  /** RFC 7592's registration access token, SHA-256; null for clients not registered dynamically. */
  registrationTokenHash: text("registration_token_hash"),
  /** When a token was last issued to it (at most daily): unused registered clients expire. */
  lastUsedAt: integer("last_used_at"),
  clientUri: text("client_uri"),
  logoUri: text("logo_uri"),
  contacts: text("contacts", { mode: "json" }).$type<string[]>(),
  softwareId: text("software_id"),
  softwareVersion: text("software_version"),
  /** The resources (RFC 8707) its tokens may be for, a subset of the deployment's; null: all of them. */
  resources: text("resources", { mode: "json" }).$type<string[]>(),
  /** RFC 9449 §5.2 `dpop_bound_access_tokens`: every token request of this client must carry a DPoP proof. */
  dpopBoundAccessTokens: integer("dpop_bound_access_tokens", { mode: "boolean" }).notNull().default(false),
  /** RFC 9126 §6 `require_pushed_authorization_requests`: its authorization requests must come through PAR. */
  requirePushedAuthorizationRequests: integer("require_pushed_authorization_requests", { mode: "boolean" })
    .notNull()
    .default(false),
  /** RP-Initiated Logout 1.0 §3.1: where `post_logout_redirect_uri` may send the browser after a logout. */
  postLogoutRedirectUris: text("post_logout_redirect_uris", { mode: "json" })
    .$type<string[]>()
    .notNull()
    .default(sql`'[]'`),
  /** Back-Channel Logout 1.0 §2.2: where logout tokens are posted; null: none. */
  backchannelLogoutUri: text("backchannel_logout_uri"),
  /** Back-Channel Logout 1.0 §2.2: whether the client needs `sid` in its logout tokens (they always carry it). */
  backchannelLogoutSessionRequired: integer("backchannel_logout_session_required", { mode: "boolean" })
    .notNull()
    .default(false),
  /** RFC 7591 `jwks`: the client's public keys, for `private_key_jwt` (RFC 7523 §2.2); null: none. */
  jwks: text("jwks", { mode: "json" }).$type<{ keys: Record<string, unknown>[] }>(),
  /** RFC 7591 `jwks_uri`: where the client's public keys are, under the outbound-URL policy; null: none. */
  jwksUri: text("jwks_uri"),
  /**
   * Issuers whose assertions this client may exchange for tokens: the JWT bearer grant (RFC 7523 §2.1) and the
   * identity assertion authorization grant (ID-JAG, MCP enterprise-managed authorization). Admin API only.
   */
  trustedIssuers: text("trusted_issuers", { mode: "json" })
    .$type<{ issuer: string; jwksUri?: string; jwks?: { keys: Record<string, unknown>[] } }[]>()
    .notNull()
    .default(sql`'[]'`),
});

export type OAuth2ClientRow = typeof oauth2Clients.$inferSelect;

/**
 * What a user allowed a client: one row per authorization-code exchange, the family its refresh tokens rotate in
 * (in the `SessionFamilies` object the grant id's first six hex digits name, src/token-families/). Access tokens name
 * their grant; deleting the row revokes the grant, and with it every access token issued under it at introspection
 * and userinfo.
 */
/**
 * What a code hands on to its grant, and the grant to every token (contract §12): how the user signed in (`acr`,
 * `amr`, for ID tokens and introspection), the browser session at this service they signed in with (`sid`: ID tokens,
 * back-channel logout), and the DPoP key the tokens are bound to (`dpop_jkt`, RFC 9449: the authorize request's, then
 * the token request's proof).
 */
const STEP_UP_AND_BINDING_COLUMNS = {
  /** `urn:edge-auth:acr:pwd`, `…:mfa` or `…:phr`; null: not recorded (grants from before). */
  acr: text("acr"),
  /** RFC 8176 methods (`pwd`, `otp`, `mfa`, `hwk`, …); null: not recorded. */
  amr: text("amr", { mode: "json" }).$type<string[]>(),
  /** The browser session (`sessions.id`) the user was signed in with; null for a grant with none. */
  sid: text("sid"),
  /** RFC 7638 thumbprint of the DPoP key the tokens are bound to; null: bearer tokens. */
  dpopJkt: text("dpop_jkt"),
};

export const oauth2Grants = sqliteTable(
  "oauth2_grants",
  {
    id: text("id").primaryKey(),
    /** The client is in the home database, this row in its user's shard: no foreign key (migration 0022). */
    clientId: text("client_id").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    /** The resources (RFC 8707) the user allowed tokens for; empty: the client itself is the audience. */
    resources: text("resources", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    /** When the user last authenticated before the code was issued (the ID token's `auth_time`), ms. */
    authTime: integer("auth_time").notNull(),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at").notNull(),
    /** When its newest refresh token expires (or its first access token, without refresh tokens). */
    expiresAt: integer("expires_at").notNull(),
    /** The organization the user let the client act in at consent (contract organizations.md §1); null: none. */
    orgId: text("org_id"),
    ...STEP_UP_AND_BINDING_COLUMNS,
  },
  (t) => [
    index("oauth2_grants_user_id").on(t.userId),
    index("oauth2_grants_sid").on(t.sid),
    index("oauth2_grants_client_id").on(t.clientId),
    index("oauth2_grants_expires_at").on(t.expiresAt),
  ],
);

export type OAuth2GrantRow = typeof oauth2Grants.$inferSelect;

/**
 * Legacy, read only (src/token-families/legacy/): the SHA-256 of refresh tokens grants handed out before tokens named
 * their grant. No longer written; dropped with the legacy drawer (docs/operations.md).
 */
export const oauth2RefreshTokens = sqliteTable(
  "oauth2_refresh_tokens",
  {
    tokenHash: text("token_hash").primaryKey(),
    grantId: text("grant_id")
      .notNull()
      .references(() => oauth2Grants.id, { onDelete: "cascade" }),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [
    index("oauth2_refresh_tokens_grant_id").on(t.grantId),
    index("oauth2_refresh_tokens_expires_at").on(t.expiresAt),
  ],
);

/**
 * Authorization codes (SHA-256), five minutes. `request_id` is unique: a pending authorization request completes
 * once. `used_at` is set by the one conditional UPDATE that consumes the code; `grant_id` names the grant it started,
 * so that a replay can revoke it (RFC 9700 §4.2.4).
 */
export const oauth2Codes = sqliteTable(
  "oauth2_codes",
  {
    codeHash: text("code_hash").primaryKey(),
    requestId: text("request_id").notNull().unique(),
    /** The client is in the home database, this row in its user's shard: no foreign key (migration 0022). */
    clientId: text("client_id").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    redirectUri: text("redirect_uri").notNull(),
    codeChallenge: text("code_challenge"),
    nonce: text("nonce"),
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    resources: text("resources", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    authTime: integer("auth_time").notNull(),
    expiresAt: integer("expires_at").notNull(),
    usedAt: integer("used_at"),
    grantId: text("grant_id"),
    /** The organization chosen on the consent page, handed on to the grant; null: none. */
    orgId: text("org_id"),
    ...STEP_UP_AND_BINDING_COLUMNS,
  },
  (t) => [index("oauth2_codes_expires_at").on(t.expiresAt)],
);

/**
 * Pushed authorization requests (RFC 9126): the checked request, kept 60 seconds under the SHA-256 of its
 * `request_uri`, for the client that pushed it; taken once by one `DELETE … RETURNING` at the authorization endpoint.
 * In the home database: the request has no user yet.
 */
export const oauth2PushedRequests = sqliteTable(
  "oauth2_pushed_requests",
  {
    requestUriHash: text("request_uri_hash").primaryKey(),
    clientId: text("client_id").notNull(),
    /** The pushed parameters as a form body (application/x-www-form-urlencoded), parsed again when taken. */
    params: text("params").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("oauth2_pushed_requests_expires_at").on(t.expiresAt)],
);

/** Consent a user gave a client on the built-in page: the scopes granted so far, asked again only for new ones. */
export const oauth2Consents = sqliteTable(
  "oauth2_consents",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** The client is in the home database, this row in its user's shard: no foreign key (migration 0022). */
    clientId: text("client_id").notNull(),
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    grantedAt: integer("granted_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId] }), index("oauth2_consents_client_id").on(t.clientId)],
);

/** An external identity linked to a user (contract §7): one user per (provider, provider user id). */
export const userProviders = sqliteTable(
  "user_providers",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    provider: text("provider").notNull(),
    providerUserId: text("provider_user_id").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("user_providers_identity").on(t.provider, t.providerUserId),
    index("user_providers_user_id").on(t.userId),
  ],
);

/**
 * A redirect to a provider waiting for its callback (contract §7), ten minutes. The state sent to the provider is
 * only known by its SHA-256 here; the row is taken by one `DELETE … RETURNING`, so a callback completes once.
 */
export const providerRequests = sqliteTable(
  "provider_requests",
  {
    stateHash: text("state_hash").primaryKey(),
    provider: text("provider").notNull(),
    /** The PKCE verifier, AES-GCM under `AUTH_ENCRYPTION_KEY`; null for providers without PKCE. */
    codeVerifierSealed: text("code_verifier_sealed"),
    nonce: text("nonce"),
    redirectTo: text("redirect_to").notNull(),
    /** The sign-up options of the request (JSON), applied if the callback creates the user. */
    options: text("options", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** With `connect`: the signed-in user the identity is linked to. */
    connectUserId: text("connect_user_id"),
    /** The app's own `state`, handed back with the redirect. */
    appState: text("app_state"),
    /** SHA-256 of the starting browser's binding cookie (src/http/browser-binding.ts): the callback must present it. */
    browserHash: text("browser_hash").notNull().default(""),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("provider_requests_expires_at").on(t.expiresAt)],
);

/** The provider's tokens of the newest sign-in, sealed, readable once by the signed-in user (getProviderTokens). */
export const providerTokenHandoffs = sqliteTable(
  "provider_token_handoffs",
  {
    /** The user lives in their shard, this row in the home database: no foreign key (migration 0022). */
    userId: text("user_id").notNull(),
    provider: text("provider").notNull(),
    /** JSON `{accessToken, expiresAt, refreshToken?}`, AES-GCM under `AUTH_ENCRYPTION_KEY`. */
    sealed: text("sealed").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.provider] }),
    index("provider_token_handoffs_expires_at").on(t.expiresAt),
  ],
);

/**
 * Security events (contract §10 audit): written after the answer by the flow that caused them, kept
 * `AUTH_AUDIT_RETENTION_DAYS` (the daily cron prunes). No foreign key: the record of an account outlives the account
 * (the admin deletion that removed it is itself an event).
 */
export const auditEvents = sqliteTable(
  "audit_events",
  {
    id: text("id").primaryKey(),
    at: integer("at").notNull(),
    type: text("type").notNull(),
    userId: text("user_id"),
    ip: text("ip"),
    userAgent: text("user_agent"),
    detail: text("detail", { mode: "json" }).$type<Record<string, unknown>>().notNull().default(sql`'{}'`),
  },
  (t) => [
    index("audit_events_at").on(t.at, t.id),
    index("audit_events_user").on(t.userId, t.at, t.id),
    index("audit_events_type").on(t.type, t.at, t.id),
    // Failed sign-ins per client address (src/audit/sign-in-failures.ts), and the console's filter by address.
    index("audit_events_ip").on(t.ip, t.type, t.at),
  ],
);

export type AuditEventRow = typeof auditEvents.$inferSelect;

/**
 * Signing keys created through the admin API (`POST /admin/keys/rotate`). The private JWK is sealed with AES-256-GCM
 * under `AUTH_ENCRYPTION_KEY`; the newest `signing` row signs, `published` rows only verify. Keys from
 * `AUTH_JWT_PRIVATE_KEYS` are not here (they live in the secret).
 */
export const signingKeys = sqliteTable("signing_keys", {
  kid: text("kid").primaryKey(),
  createdAt: integer("created_at").notNull(),
  status: text("status", { enum: ["signing", "published"] }).notNull(),
  privateJwkSealed: text("private_jwk_sealed").notNull(),
  publicJwk: text("public_jwk", { mode: "json" }).$type<Record<string, string>>().notNull(),
});

/**
 * Admin console sign-ins (src/admin/console/session.ts): the cookie names a row, so a session ends when its row goes
 * (sign-out, "end" in the console's session list) even though the cookie itself would still verify.
 */
export const consoleSessions = sqliteTable(
  "console_sessions",
  {
    id: text("id").primaryKey(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    ip: text("ip"),
    userAgent: text("user_agent"),
  },
  (t) => [index("console_sessions_expires_at").on(t.expiresAt)],
);

export type ConsoleSessionRow = typeof consoleSessions.$inferSelect;

/**
 * Device authorization requests (RFC 8628): a device or CLI shows a user code; the person enters it on the built-in
 * page, signs in and approves; the device polls the token endpoint with its device code. Both codes are stored
 * hashed (the user code under an HMAC: eight letters would fall to a plain hash). Polls and the one exchange are
 * conditional statements on the row.
 */
export const deviceAuthorizations = sqliteTable(
  "device_authorizations",
  {
    deviceCodeHash: text("device_code_hash").primaryKey(),
    userCodeHash: text("user_code_hash").notNull().unique(),
    clientId: text("client_id")
      .notNull()
      .references(() => oauth2Clients.clientId, { onDelete: "cascade" }),
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    resources: text("resources", { mode: "json" }).$type<string[]>().notNull(),
    /** `pending` until the person approves or denies it on the page. */
    status: text("status").$type<"pending" | "approved" | "denied">().notNull(),
    /** The person who approved, in their shard (maybe another database): no foreign key (migration 0022). */
    userId: text("user_id"),
    authTime: integer("auth_time"),
    /** How the approver signed in, and the browser session they approved from (contract §12). */
    acr: text("acr"),
    amr: text("amr", { mode: "json" }).$type<string[]>(),
    sid: text("sid"),
    /** Seconds the device must wait between polls; `slow_down` adds 5 (RFC 8628 §3.5). */
    intervalSeconds: integer("interval_seconds").notNull(),
    lastPolledAt: integer("last_polled_at"),
    /** Whether the last poll came sooner than the interval allowed (set by the poll's own UPDATE). */
    tooFast: integer("too_fast", { mode: "boolean" }).notNull().default(false),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("device_authorizations_expires_at").on(t.expiresAt)],
);

export type DeviceAuthorizationRow = typeof deviceAuthorizations.$inferSelect;

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
    kind: text("kind").$type<"user" | "bucket" | "file" | "token">().notNull(),
    id: text("id").notNull(),
    /** SHA-256 of the imported row as the service normalised it. */
    fingerprint: text("fingerprint").notNull(),
    /** Users: `updated_at` as written by the import; tokens: the user they belong to. */
    rowUpdatedAt: integer("row_updated_at"),
    owner: text("owner"),
    /** Users: the ids of what came with them (providers, keys, tokens, ticket), to remove what Nhost removed. */
    parts: text("parts", { mode: "json" }).$type<ImportedParts>(),
    importedAt: integer("imported_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.id] }), index("import_ledger_owner").on(t.owner)],
);

export interface ImportedParts {
  providers: string[];
  securityKeys: string[];
  /** `regular:<session id>` or `pat:<pat id>`, by token hash. */
  tokens: Record<string, string>;
  ticketHash: string | null;
  /** SHA-256 of the TOTP secret imported (null: none), so an unchanged secret is not sealed again. */
  totpHash: string | null;
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

/**
 * The outbox of the event stream (contract move-in §5, src/events/): one row per change to a user, a session or a
 * file, written by the database itself (triggers of migration 0020) in the statement that makes the change, so there
 * is no change without its event and no event without its change, whichever code path wrote. A row leaves once the
 * EVENTS queue has it (src/events/outbox.ts).
 */
export const eventOutbox = sqliteTable("event_outbox", {
  /** Insertion order: the drain sends oldest first. */
  position: integer("position").primaryKey({ autoIncrement: true }),
  /** The event's id, unique forever: consumers deduplicate on it. */
  id: text("id").notNull().unique().default(sql`('evt_' || lower(hex(randomblob(16))))`),
  type: text("type").notNull(),
  /** Whose stream the event is in: the user's id, or `file:<id>` for a file no user uploaded. */
  subject: text("subject").notNull(),
  /** 1, 2, 3, … per subject (event_sequences): the order a consumer restores. */
  sequence: integer("sequence").notNull(),
  at: integer("at")
    .notNull()
    .default(sql`(CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER))`),
  data: text("data", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  /** Set while one drain is sending the row, so that two drains do not send it twice; null when free. */
  claimedUntil: integer("claimed_until"),
});

export type EventOutboxRow = typeof eventOutbox.$inferSelect;

/** The last sequence number given per subject (a user's id, or `file:<id>`); kept after the subject is gone. */
export const eventSequences = sqliteTable("event_sequences", {
  subject: text("subject").primaryKey(),
  last: integer("last").notNull(),
});

/**
 * Subjects whose changes write no event, for the length of one batch: the Nhost import (src/move-in/) puts its
 * subjects here in the first statement of its batch and takes them out in the last (contract move-in §2: the import
 * sends no per-user events, only `import.completed`). A batch is one transaction, so no other request's change to the
 * same subject is ever muted.
 */
export const eventMutes = sqliteTable("event_mutes", {
  subject: text("subject").primaryKey(),
});

/**
 * Messages that exhausted their retries on a queue (the dead-letter queue's consumer keeps them here: src/events/),
 * for the console to list and redeliver.
 */
export const deadLetters = sqliteTable(
  "dead_letters",
  {
    id: text("id").primaryKey(),
    /** The queue the message failed on. */
    queue: text("queue").notNull(),
    body: text("body", { mode: "json" }).$type<unknown>().notNull(),
    attempts: integer("attempts").notNull(),
    at: integer("at").notNull(),
  },
  (t) => [index("dead_letters_at").on(t.at)],
);

export type DeadLetterRow = typeof deadLetters.$inferSelect;

/**
 * Webhook endpoints (contract move-in §5.2, src/webhooks/). The signing secret is needed in clear to sign, so it is
 * sealed with AES-256-GCM under `AUTH_ENCRYPTION_KEY` rather than hashed.
 */
export const webhookEndpoints = sqliteTable("webhook_endpoints", {
  id: text("id").primaryKey(),
  url: text("url").notNull(),
  /** Event types delivered; empty means every type. */
  events: text("events", { mode: "json" }).$type<string[]>().notNull(),
  description: text("description"),
  secretSealed: text("secret_sealed").notNull(),
  disabled: integer("disabled", { mode: "boolean" }).notNull().default(false),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;

/** One event to one endpoint: created when the event reaches the endpoint's fan-out, one per (endpoint, event). */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    /** The body posted, as signed: `{id, type, timestamp, subject, sequence, data}`. */
    payload: text("payload").notNull(),
    status: text("status").$type<"pending" | "delivered" | "failed">().notNull(),
    attempts: integer("attempts").notNull().default(0),
    /** The receiver's last HTTP status (null: no answer). */
    lastStatus: integer("last_status"),
    /** Why the last attempt failed, or the start of the receiver's answer. */
    lastResponse: text("last_response"),
    lastAttemptAt: integer("last_attempt_at"),
    deliveredAt: integer("delivered_at"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_endpoint_event").on(t.endpointId, t.eventId),
    index("webhook_deliveries_endpoint_created").on(t.endpointId, t.createdAt),
  ],
);

export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;

/**
 * With several shards (src/db/shards.ts), the lookups that do not start from a user id: a key, the SHA-256 of
 * `<kind>:<normalised value>` (an email, a phone number, a provider identity, a token's hash, an imported ticket or
 * file id: no personal data in clear), names the user who owns it, whose slot names the shard. Kept in the home
 * database (`DB`) only; empty, and never read, with one shard. The shards are the truth: a key whose user is gone is
 * stale, taken over by the next claim (src/db/directory.ts).
 */
export const directory = sqliteTable(
  "directory",
  {
    key: text("key").primaryKey(),
    /** What the key names (src/db/directory.ts `DirectoryKind`): a deleted user's `file` keys stay (their files do). */
    kind: text("kind").notNull(),
    userId: text("user_id").notNull(),
    /** When the key was claimed: a claim younger than the sign-up window is never taken over. */
    claimedAt: integer("claimed_at").notNull(),
  },
  (t) => [index("directory_user").on(t.userId)],
);

/*
 * Organizations, enterprise connections and SCIM (contract organizations.md). They belong to no one user, so they
 * live in the home database (`DB`) only, like the OAuth2 clients; a member's user row is in the user's shard, and a
 * session's or grant's `org_id` names one of these rows across databases, with no foreign key.
 */

export const organizations = sqliteTable("organizations", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  /** Lower-case letters, digits and dashes; unique. */
  slug: text("slug").notNull().unique(),
  metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown>>().notNull().default(sql`'{}'`),
  /** Password, link, OTP and passkey sign-ins of emails in the org's verified domains answer 403 `sso-required`. */
  enforceSso: integer("enforce_sso", { mode: "boolean" }).notNull().default(false),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

export type OrganizationRow = typeof organizations.$inferSelect;

export const orgMembers = sqliteTable(
  "org_members",
  {
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull(),
    /** `owner`, `admin`, `member`, or a name of `AUTH_ORG_ROLES`. */
    role: text("role").notNull(),
    /** How the membership began: `creator`, `invitation`, `admin`, `scim`, `jit`. */
    source: text("source").notNull(),
    /** The org created the user (SCIM, or just-in-time inside its verified domains): it may also delete it. */
    provisioned: integer("provisioned", { mode: "boolean" }).notNull().default(false),
    /** SCIM: false after `active: false`; an inactive member's tokens carry no org and it can't switch in. */
    active: integer("active", { mode: "boolean" }).notNull().default(true),
    /** SCIM's `externalId` of the user, as the org's IdP knows it. */
    externalId: text("external_id"),
    /**
     * SCIM: the User resource's other attributes as the org's IdP last sent them (name, title, phoneNumbers, …), JSON,
     * per organization, so what it wrote reads back (src/scim/). Null for members SCIM never touched.
     */
    scimAttributes: text("scim_attributes", { mode: "json" }).$type<Record<string, unknown>>(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.userId] }),
    index("org_members_user").on(t.userId),
    uniqueIndex("org_members_external_id").on(t.orgId, t.externalId),
  ],
);

export type OrgMemberRow = typeof orgMembers.$inferSelect;

/** Invitations by email: the ticket is kept as SHA-256, single use, bound to `email`. */
export const orgInvitations = sqliteTable(
  "org_invitations",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** Lower-cased. */
    email: text("email").notNull(),
    role: text("role").notNull(),
    ticketHash: text("ticket_hash").notNull().unique(),
    invitedBy: text("invited_by"),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("org_invitations_org").on(t.orgId), index("org_invitations_expires_at").on(t.expiresAt)],
);

export type OrgInvitationRow = typeof orgInvitations.$inferSelect;

/**
 * Email domains an organization claims. Verified by one organization at most (the partial unique index); any number
 * may claim it unverified, each with its own TXT value.
 */
export const orgDomains = sqliteTable(
  "org_domains",
  {
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** Lower-cased, without a trailing dot. */
    domain: text("domain").notNull(),
    /** The value the TXT record `_edge-auth-verify.<domain>` must hold. */
    txtValue: text("txt_value").notNull(),
    verifiedAt: integer("verified_at"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.domain] }),
    uniqueIndex("org_domains_verified").on(t.domain).where(sql`verified_at IS NOT NULL`),
  ],
);

export type OrgDomainRow = typeof orgDomains.$inferSelect;

/** Enterprise connections (OIDC or SAML) of an organization. */
export const ssoConnections = sqliteTable(
  "sso_connections",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** `oidc` or `saml`. */
    type: text("type").notNull(),
    /**
     * The type's settings as JSON (src/sso/): OIDC issuer, client id, scopes; SAML the IdP's entity id, SSO URL and
     * certificates from its metadata. Secrets (an OIDC client secret) are AES-256-GCM under `AUTH_ENCRYPTION_KEY`.
     */
    settings: text("settings", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** The role of a member this connection creates, unless a group or attribute maps to another. */
    defaultRole: text("default_role").notNull().default("member"),
    /** Group or attribute value → role. */
    roleMapping: text("role_mapping", { mode: "json" })
      .$type<Record<string, string>>()
      .notNull()
      .default(sql`'{}'`),
    /** SAML: accept IdP-initiated responses (no `InResponseTo`). */
    allowIdpInitiated: integer("allow_idp_initiated", { mode: "boolean" }).notNull().default(false),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("sso_connections_org").on(t.orgId)],
);

export type SsoConnectionRow = typeof ssoConnections.$inferSelect;

/**
 * Enterprise sign-ins under way (`POST /sso/start` → the IdP → the OIDC callback or the SAML ACS), ten minutes each,
 * consumed once by a `DELETE … RETURNING`. A SAML ACS keeps the verified identity here under a one-time id
 * (`result_hash`) and bounces the browser to a GET of its own, where the browser binding is checked.
 */
export const ssoRequests = sqliteTable(
  "sso_requests",
  {
    /** SHA-256 of the OIDC `state`, or of the SAML AuthnRequest's ID (what `InResponseTo` names). */
    stateHash: text("state_hash").primaryKey(),
    connectionId: text("connection_id").notNull(),
    /** The PKCE verifier, AES-GCM under `AUTH_ENCRYPTION_KEY` (OIDC). */
    codeVerifierSealed: text("code_verifier_sealed"),
    nonce: text("nonce"),
    redirectTo: text("redirect_to").notNull(),
    /** SHA-256 of the starting browser's binding cookie (src/http/browser-binding.ts). */
    browserHash: text("browser_hash").notNull(),
    /** SAML: the identity the ACS verified (JSON), waiting for the browser's GET; null before. */
    result: text("result", { mode: "json" }).$type<Record<string, unknown>>(),
    /** SAML: SHA-256 of the one-time id the ACS bounced the browser with; unique among non-null values. */
    resultHash: text("result_hash").unique(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("sso_requests_expires_at").on(t.expiresAt)],
);

/** SAML assertion ids accepted once each: the insert that conflicts is a replay. Kept until the assertion expires. */
export const ssoAssertionIds = sqliteTable(
  "sso_assertion_ids",
  {
    /** SHA-256 of `<connection id>:<assertion id>`. */
    idHash: text("id_hash").primaryKey(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("sso_assertion_ids_expires_at").on(t.expiresAt)],
);

/** SCIM bearer tokens of an organization: SHA-256 only, shown once at creation. */
export const scimTokens = sqliteTable(
  "scim_tokens",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull().default(""),
    tokenHash: text("token_hash").notNull().unique(),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at"),
  },
  (t) => [index("scim_tokens_org").on(t.orgId)],
);

export type ScimTokenRow = typeof scimTokens.$inferSelect;

/** SCIM groups of an organization; a group may carry a role its members get (contract organizations.md §3). */
export const scimGroups = sqliteTable(
  "scim_groups",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    displayName: text("display_name").notNull(),
    externalId: text("external_id"),
    /** The org role its members get, when set (the highest of a member's groups wins). */
    role: text("role"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("scim_groups_org").on(t.orgId),
    uniqueIndex("scim_groups_org_name").on(t.orgId, t.displayName),
  ],
);

export type ScimGroupRow = typeof scimGroups.$inferSelect;

export const scimGroupMembers = sqliteTable(
  "scim_group_members",
  {
    groupId: text("group_id")
      .notNull()
      .references(() => scimGroups.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.userId] }), index("scim_group_members_user").on(t.userId)],
);

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

/**
 * Settings an operator makes in the console that win over the environment (contract §13: the brand), one row per
 * setting, its value JSON. On the home database.
 */
export const serviceSettings = sqliteTable("service_settings", {
  key: text("key").primaryKey(),
  value: text("value", { mode: "json" }).$type<unknown>().notNull(),
  updatedAt: integer("updated_at").notNull(),
});
