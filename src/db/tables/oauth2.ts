import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { users } from "./auth";

/**
 * The OAuth2 authorization server's tables: clients, grants, codes, pushed requests, consents, device
 * authorizations. Every table is described in docs/storage-schema.md; times are Unix milliseconds.
 */

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
  /** OpenID CIBA Core §4: `poll` or `ping` for a client an admin allowed CIBA; null: none. */
  backchannelTokenDeliveryMode: text("backchannel_token_delivery_mode").$type<"poll" | "ping">(),
  /** CIBA ping mode: where the ping is posted (https, under the outbound-URL policy). */
  backchannelClientNotificationEndpoint: text("backchannel_client_notification_endpoint"),
  /** CIBA: the organization whose active members alone this client may ask; its tokens carry it. Null: anyone. */
  backchannelOrganization: text("backchannel_organization"),
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
    .$type<
      {
        issuer: string;
        jwksUri?: string;
        jwks?: { keys: Record<string, unknown>[] };
        /** Only these users may be named by its assertions (ids); absent: any user. */
        users?: string[];
        /** Only active members of one of these organizations (ids); absent: any user. */
        orgs?: string[];
      }[]
    >()
    .notNull()
    .default(sql`'[]'`),
  /**
   * The token vault (contract operators.md §3): the providers whose tokens this client may get for a user who
   * connected the account and let it (token exchange with `audience=provider:<name>`). Admin API only.
   */
  vaultProviders: text("vault_providers", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
  /**
   * RFC 9396: the types of `authorization_details` this client may ask for, each with the JSON Schema of its fields
   * and the template the consent and approval pages show it with (src/oauth2/authorization-details/). Admin API only.
   * Migration 0034 indexes the clients that have some (a partial index, written there by hand) for discovery.
   */
  authorizationDetailsTypes: text("authorization_details_types", { mode: "json" })
    .$type<{ type: string; schema: Record<string, unknown>; template: string | Record<string, string> }[]>()
    .notNull()
    .default(sql`'[]'`),
  /**
   * FedCM (W3C Federated Credential Management, src/fedcm/): the origins of the relying-party pages allowed to ask the
   * browser's own sign-in prompt for this client; empty: none, the FedCM endpoints serve it nothing.
   */
  fedcmOrigins: text("fedcm_origins", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
  /** RFC 7591 `policy_uri`: the client's privacy policy (the FedCM prompt links it); null: none. */
  policyUri: text("policy_uri"),
  /** RFC 7591 `tos_uri`: the client's terms of service (the FedCM prompt links them); null: none. */
  tosUri: text("tos_uri"),
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
  /**
   * RFC 9396: the authorization details the user approved (checked against the client's types when asked); null:
   * none. A token request may ask for fewer, never more (src/oauth2/authorization-details/narrow.ts).
   */
  authorizationDetails: text("authorization_details", { mode: "json" }).$type<
    { type: string; [field: string]: unknown }[]
  >(),
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

/**
 * Consent a user gave a client on the built-in page: the scopes and resources granted so far, asked again only for new
 * ones.
 */
export const oauth2Consents = sqliteTable(
  "oauth2_consents",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** The client is in the home database, this row in its user's shard: no foreign key (migration 0022). */
    clientId: text("client_id").notNull(),
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    /**
     * The RFC 8707 resources allowed (the page lists them), beside the client itself, which every consent covers. A
     * row from before migration 0048 has none: it covers a request naming no resource, and asks about any other.
     */
    resources: text("resources", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    grantedAt: integer("granted_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId] }), index("oauth2_consents_client_id").on(t.clientId)],
);

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
    /**
     * `ciba`: an OpenID CIBA request (src/oauth2/ciba/), whose "device" is the client asking from its back channel:
     * `device_code_hash` is its `auth_req_id`'s, `user_code_hash` the approval link's handle (`ciba:` + 256 random
     * bits, not a secret: opening it needs the named user's sign-in and their click). Polled, decided and consumed
     * exactly as a device code is.
     */
    kind: text("kind").$type<"device" | "ciba">().notNull().default("device"),
    /**
     * CIBA: who is asked: a user id, or for a hint naming nobody `hint:` + its HMAC (counted alike, so an unknown
     * hint answers as a known one). Only this user may decide the request.
     */
    subject: text("subject"),
    /** CIBA `binding_message`, shown quoted on the approval page and in the mail. */
    bindingMessage: text("binding_message"),
    /** CIBA `acr_values` the approval must reach (a step-up on the page). */
    acrValues: text("acr_values", { mode: "json" }).$type<string[]>(),
    /** CIBA: the organization the client is confined to (its `backchannelOrganization`), carried to the grant. */
    orgId: text("org_id"),
    /** CIBA ping mode: `auth_req_id` and `client_notification_token`, sealed (AES-GCM), for the ping. */
    pingSealed: text("ping_sealed"),
    /** CIBA: RFC 9396 authorization details the client asked (checked against its types), shown on the page. */
    authorizationDetails: text("authorization_details", { mode: "json" }).$type<
      { type: string; [field: string]: unknown }[]
    >(),
  },
  (t) => [
    index("device_authorizations_expires_at").on(t.expiresAt),
    index("device_authorizations_subject").on(t.subject, t.status),
  ],
);

export type DeviceAuthorizationRow = typeof deviceAuthorizations.$inferSelect;
