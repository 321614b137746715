import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * The admin console's tables: its sessions. Every table is described in docs/storage-schema.md; times are Unix
 * milliseconds.
 */

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
