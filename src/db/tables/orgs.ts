import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * Organizations' tables: organizations, members, invitations, verified domains. Every table is described in
 * docs/storage-schema.md; times are Unix milliseconds.
 */

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
    /**
     * The user's slot (`slotOfUser`, src/db/shards.ts): an org switch whose session is in another
     * database reads the org's members of the token's slot beside its rotation (src/auth/org-membership.ts). NULL for
     * rows from before the column, until the daily sweep or the member's next switch fills it: read after, as before.
     */
    userSlot: integer("user_slot"),
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
    index("org_members_slot").on(t.orgId, t.userSlot),
    uniqueIndex("org_members_external_id").on(t.orgId, t.externalId),
  ],
);

export type OrgMemberRow = typeof orgMembers.$inferSelect;

/**
 * Which org a session acts in, for sessions kept in another database than this one (several shards): the home
 * database's copy of the session row's `org_id`, by the token's locator, so that a plain refresh of such a session
 * reads its membership beside its rotation, by joining `org_members` here (src/auth/org-membership.ts
 * `orgsOfHints`). Only ever a hint of which membership to read: the membership itself is read in the same request,
 * and a hint missing, stale or naming another user reads the membership after the session's row, as before. Written
 * after a refresh's answer (src/auth/sessions/session-org.ts); the orgs feature's daily sweep removes hints older
 * than `HINT_MAX_AGE_MS` (src/orgs/housekeeping.ts).
 */
export const orgSessionHints = sqliteTable(
  "org_session_hints",
  {
    /** The session (its family) in its user's shard. */
    sessionId: text("session_id").primaryKey(),
    /** The locator its tokens carry: what a refresh knows before the rotation answers. */
    locator: text("locator").notNull(),
    userId: text("user_id").notNull(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    writtenAt: integer("written_at").notNull(),
  },
  (t) => [
    index("org_session_hints_locator").on(t.locator),
    index("org_session_hints_written_at").on(t.writtenAt),
  ],
);

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
