import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { organizations } from "./orgs";

/**
 * Enterprise SSO's tables: connections, pending requests, accepted SAML assertion ids. Every table is described in
 * docs/storage-schema.md; times are Unix milliseconds.
 */

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
    /**
     * The setup link that made it (contract operators.md §5), or null. Such a connection is enabled only by the org's
     * owner, and only after a successful test round trip (`tested_at`).
     */
    setupLinkId: text("setup_link_id"),
    /** The email domains it serves, among the org's verified ones; null: all of them. */
    domains: text("domains", { mode: "json" }).$type<string[]>(),
    /** When a "test the connection" round trip last succeeded. */
    testedAt: integer("tested_at"),
    /** The last test's outcome: `{at, ok, email?, error?}` (shown on the setup pages and to the owner). */
    lastTest: text("last_test", { mode: "json" }).$type<Record<string, unknown>>(),
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
    /** A "test the connection" round trip (a setup link's): it signs nobody in, it records the outcome. */
    test: integer("test", { mode: "boolean" }).notNull().default(false),
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
