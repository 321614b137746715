import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * Webhooks' tables: endpoints and deliveries. Every table is described in docs/storage-schema.md; times are Unix
 * milliseconds.
 */

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
