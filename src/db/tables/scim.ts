import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { organizations } from "./orgs";

/**
 * SCIM's tables: bearer tokens, groups and their members. Every table is described in docs/storage-schema.md;
 * times are Unix milliseconds.
 */

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
    /** The setup link that made it, or null: such a token gives no `owner` or `admin` role (operators.md §5). */
    setupLinkId: text("setup_link_id"),
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
