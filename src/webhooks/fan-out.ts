import { and, eq, inArray } from "drizzle-orm";
import type { Config } from "../config";
import type { Db } from "../db/client";
import { webhookDeliveries, webhookEndpoints } from "../db/schema";
import type { EventConsumer } from "../events/consume";
import type { DeliveryMessage, StreamEvent } from "../events/types";
import { randomId } from "./endpoints";

/**
 * D1 binds at most 100 parameters per statement: a delivery row binds 8, so 10 rows per insert, and as many endpoint
 * ids per `IN (…)` with room for the event id.
 */
const ROWS_PER_INSERT = 10;
const IDS_PER_QUERY = 90;
/** The most messages one `sendBatch` takes. */
const MESSAGES_PER_SEND = 100;

const chunks = <T>(items: T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

/** The body every endpoint receives for an event, exactly as it is signed and posted. */
export function webhookPayload(event: StreamEvent): string {
  // `id` is the event's: a receiver deduplicates on it (and on `webhook-id`, the same value) across retries.
  return JSON.stringify({
    id: event.id,
    type: event.type,
    timestamp: event.timestamp,
    // Whose stream, and where in it: a receiver orders per subject by sequence (queues do not keep order).
    subject: event.subject,
    sequence: event.sequence,
    data: event.data,
  });
}

/**
 * The webhooks' consumer of the event stream (contract move-in §5.2): per event, one delivery row per enabled
 * endpoint subscribed to its type, then a message per delivery to the deliveries queue, which posts and retries each
 * on its own (a slow receiver never holds back the stream or another receiver).
 *
 * Idempotent, as the stream asks: a delivery is unique per (endpoint, event), so a retried event makes no second
 * row; and every delivery of the event that is still pending and never attempted is queued again, so that an event
 * retried after its queue send failed loses none. A delivery may then be queued twice: delivery is at least once,
 * and receivers deduplicate on the event id.
 */
export async function webhookFanOut(deps: {
  db: Db;
  config: Config;
  queue: Queue;
  now: () => number;
}): Promise<EventConsumer> {
  // Once per batch (endpoints change rarely, events come by the hundred), at the first event rather than here: a D1
  // failure then fails that event, which the stream retries with its backoff, instead of the whole batch at once.
  let endpoints: Promise<{ id: string; events: string[] }[]> | undefined;
  const enabledEndpoints = () =>
    (endpoints ??= deps.db
      .select({ id: webhookEndpoints.id, events: webhookEndpoints.events })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.disabled, false))
      .all());
  return {
    name: "webhooks",
    async consume(event) {
      const targets = (await enabledEndpoints())
        .filter((endpoint) => endpoint.events.length === 0 || endpoint.events.includes(event.type))
        .map((endpoint) => endpoint.id);
      if (targets.length === 0) return;
      const payload = webhookPayload(event);
      const createdAt = deps.now();
      const rows = targets.map((endpointId) => ({
        id: randomId("whd_"),
        endpointId,
        eventId: event.id,
        eventType: event.type,
        payload,
        status: "pending" as const,
        attempts: 0,
        createdAt,
      }));
      for (const chunk of chunks(rows, ROWS_PER_INSERT)) {
        await deps.db.insert(webhookDeliveries).values(chunk).onConflictDoNothing();
      }
      const waiting: { id: string }[] = [];
      for (const ids of chunks(targets, IDS_PER_QUERY)) {
        const found = await deps.db
          .select({ id: webhookDeliveries.id })
          .from(webhookDeliveries)
          .where(
            and(
              inArray(webhookDeliveries.endpointId, ids),
              eq(webhookDeliveries.eventId, event.id),
              eq(webhookDeliveries.status, "pending"),
              eq(webhookDeliveries.attempts, 0),
            ),
          )
          .all();
        waiting.push(...found);
      }
      for (const chunk of chunks(waiting, MESSAGES_PER_SEND)) {
        await deps.queue.sendBatch(
          chunk.map(({ id }) => ({
            body: { deliveryId: id } satisfies DeliveryMessage,
            contentType: "json" as const,
          })),
        );
      }
    },
  };
}
