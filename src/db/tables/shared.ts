import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * The plumbing's tables, which no feature owns: the audit log, signing keys, the event stream's outbox, sequences,
 * mutes and dead letters, the directory of where each user's rows live, the development mailbox and SMS, the
 * service's settings. Every table is described in docs/storage-schema.md; times are Unix milliseconds.
 */

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
    /** The subject: the user the event concerns. */
    userId: text("user_id"),
    /** Who acted (src/audit/actor.ts): user, admin, impersonator, worker, scim, system; and their name when known. */
    actor: text("actor").notNull().default("user"),
    actorName: text("actor_name"),
    /** `success` or `failure`, and a reason code (src/audit/outcome.ts). */
    outcome: text("outcome").notNull().default("success"),
    reason: text("reason"),
    ip: text("ip"),
    userAgent: text("user_agent"),
    detail: text("detail", { mode: "json" }).$type<Record<string, unknown>>().notNull().default(sql`'{}'`),
  },
  (t) => [
    // `GET /admin/audit?actor=…`, newest first.
    index("audit_events_actor").on(t.actor, t.at, t.id),
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

/**
 * Settings an operator makes in the console that win over the environment (contract §13: the brand), one row per
 * setting, its value JSON. On the home database.
 */
export const serviceSettings = sqliteTable("service_settings", {
  key: text("key").primaryKey(),
  value: text("value", { mode: "json" }).$type<unknown>().notNull(),
  updatedAt: integer("updated_at").notNull(),
});
