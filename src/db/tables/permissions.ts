import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Permissions' tables (contract platform.md §2, src/permissions/): the Cedar schema and policy set, every version
 * kept, and the relationships the service stores for sharing. Every table is described in docs/storage-schema.md;
 * times are Unix milliseconds. They belong to no one user, so they live in the home database (`DB`) only.
 */

/**
 * Every version of the Cedar schema (`kind = 'schema'`) and of the whole policy set (`kind = 'policies'`), as text.
 * The newest row of a kind is the one in force; the largest `id` of all is the version a check compares with its
 * cache (src/permissions/active-set.ts), one primary-key read at most once a second per isolate.
 */
export const authzDocuments = sqliteTable(
  "authz_documents",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    kind: text("kind", { enum: ["schema", "policies"] }).notNull(),
    text: text("text").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("authz_documents_kind").on(t.kind, t.id)],
);

export type AuthzDocumentRow = typeof authzDocuments.$inferSelect;

/**
 * Relationships (`{resource:{type,id}, relation, subject:{type,id}}`): in a check, the resource's attribute named
 * `relation` is the set of its subjects (`principal in resource.editors`). Types are Cedar's, verbatim (`User`,
 * `OrgRole`, the app's own). A user's or an organization's go when it does (src/permissions/cleanup.ts).
 */
export const authzRelationships = sqliteTable(
  "authz_relationships",
  {
    resourceType: text("resource_type").notNull(),
    resourceId: text("resource_id").notNull(),
    relation: text("relation").notNull(),
    subjectType: text("subject_type").notNull(),
    subjectId: text("subject_id").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.resourceType, t.resourceId, t.relation, t.subjectType, t.subjectId] }),
    index("authz_relationships_subject").on(t.subjectType, t.subjectId),
  ],
);

export type AuthzRelationshipRow = typeof authzRelationships.$inferSelect;
