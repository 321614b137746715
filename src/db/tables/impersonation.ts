import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Impersonation's table (contract operators.md §1), in the home database: one row per impersonation, named by its
 * session's id, kept after it ended (the console's list, the mail after). Described in docs/storage-schema.md; times
 * are Unix milliseconds.
 */
export const impersonations = sqliteTable(
  "impersonations",
  {
    /** The session's id (`sessions.id` in the user's shard). */
    id: text("id").primaryKey(),
    userId: text("user_id").notNull(),
    /** Who acts, as the operator named themself (`act.sub`). */
    actor: text("actor").notNull(),
    /** The Worker that asked through the `AuthAdmin` binding (its `props.caller`); null through the admin API. */
    caller: text("caller"),
    reason: text("reason").notNull(),
    startedAt: integer("started_at").notNull(),
    endsAt: integer("ends_at").notNull(),
    /** When it ended (its time up, ended early, or its user's sessions ended); null while it runs. */
    endedAt: integer("ended_at"),
    /** `expired`, `ended` (DELETE), `revoked` (the session went another way). */
    endedHow: text("ended_how"),
    /** SHA-256 of the one-time landing link's secret; null once used (or never made). */
    landingHash: text("landing_hash"),
    /** The session's first refresh token, AES-GCM sealed, handed to the app by the landing link. */
    landingSealed: text("landing_sealed"),
    landingExpiresAt: integer("landing_expires_at"),
  },
  (t) => [
    index("impersonations_user").on(t.userId, t.startedAt),
    index("impersonations_running").on(t.endedAt, t.endsAt),
    index("impersonations_landing").on(t.landingHash),
  ],
);

export type ImpersonationRow = typeof impersonations.$inferSelect;
