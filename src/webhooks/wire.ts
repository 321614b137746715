import { z } from "zod";
import type { WebhookDeliveryRow, WebhookEndpointRow } from "../db/schema";
import { EVENT_TYPES } from "../events/types";

/** The admin API's webhook resources (contract move-in §5.2), as they travel and as the OpenAPI document shows them. */

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

const eventsField = z
  .array(z.string().max(100))
  .max(EVENT_TYPES.length * 2)
  .describe(`Event types delivered (${EVENT_TYPES.join(", ")}); empty or absent: every type`);

export const createEndpointSchema = z.object({
  url: z.string().max(2048).describe("https only; contract auth.md §1's outbound-URL policy"),
  events: eventsField.optional(),
  description: z.string().max(500).nullable().optional(),
});
export type CreateEndpointBody = z.infer<typeof createEndpointSchema>;

export const updateEndpointSchema = z.object({
  url: createEndpointSchema.shape.url.optional(),
  events: eventsField.optional(),
  description: z.string().max(500).nullable().optional(),
  disabled: z.boolean().optional().describe("A disabled endpoint gets no new delivery"),
});
export type UpdateEndpointBody = z.infer<typeof updateEndpointSchema>;

export const wireEndpointSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()).describe("Empty: every event type"),
  description: z.string().nullable(),
  disabled: z.boolean(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  secret: z
    .string()
    .optional()
    .describe("`whsec_…`, the signing secret: only in the answer that created the endpoint"),
});
export type WireEndpoint = z.infer<typeof wireEndpointSchema>;

export function toWireEndpoint(row: WebhookEndpointRow, secret?: string): WireEndpoint {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    disabled: row.disabled,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    ...(secret ? { secret } : {}),
  };
}

export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

export const wireDeliverySchema = z.object({
  id: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  status: z
    .enum(DELIVERY_STATUSES)
    .describe("failed: out of retries (a dead letter); redeliver sends it again"),
  attempts: z.number().int(),
  lastStatus: z.number().int().nullable().describe("The receiver's last HTTP status; null: no answer"),
  lastResponse: z.string().nullable().describe("The start of the last answer, or why there was none"),
  lastAttemptAt: z.iso.datetime().nullable(),
  deliveredAt: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
});
export type WireDelivery = z.infer<typeof wireDeliverySchema>;

export function toWireDelivery(row: WebhookDeliveryRow): WireDelivery {
  return {
    id: row.id,
    eventId: row.eventId,
    eventType: row.eventType,
    status: row.status,
    attempts: row.attempts,
    lastStatus: row.lastStatus,
    lastResponse: row.lastResponse,
    lastAttemptAt: isoOrNull(row.lastAttemptAt),
    deliveredAt: isoOrNull(row.deliveredAt),
    createdAt: iso(row.createdAt),
  };
}
