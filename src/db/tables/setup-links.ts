import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { organizations } from "./orgs";

/**
 * Setup links (contract operators.md §5): a link an org owner (or the operator) hands to the customer's IT admin, who
 * sets up the org's domains, SSO connection and SCIM token through hosted pages with it. Described in
 * docs/storage-schema.md; times are Unix milliseconds.
 */
export const setupLinks = sqliteTable(
  "setup_links",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** SHA-256 (hex) of the link's secret part; the link is `<id>.<secret>`, the secret never stored. */
    secretHash: text("secret_hash").notNull(),
    /** What the link may do: a subset of `sso`, `scim`, `domains`. */
    intents: text("intents", { mode: "json" }).$type<string[]>().notNull(),
    /** The owner who made it; null when the operator made it (admin API, console). */
    createdBy: text("created_by"),
    /** Domains claimed through this link (their TXT records shown on its pages). */
    claimed: text("claimed", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    /** Domains verified through this link (its SSO connections serve only these unless the owner widens them). */
    domains: text("domains", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    revokedAt: integer("revoked_at"),
    lastUsedAt: integer("last_used_at"),
  },
  (t) => [index("setup_links_org").on(t.orgId), index("setup_links_expires_at").on(t.expiresAt)],
);

export type SetupLinkRow = typeof setupLinks.$inferSelect;
