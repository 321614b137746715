import { and, desc, eq, ne } from "drizzle-orm";
import type { Db } from "../db/client";
import { webhookDeliveries, webhookEndpoints } from "../db/schema";
import { AppError } from "../errors";
import { originOf } from "../events/dead-letters";
import type { DeliveryMessage } from "../events/types";
import { type Page, pastCursor, toPage } from "../http/paging";
import { type DELIVERY_STATUSES, toWireDelivery, type WireDelivery } from "./wire";

/** The deliveries of an endpoint as the admin API and the console see them, and what an operator does with them. */

type Status = (typeof DELIVERY_STATUSES)[number];

async function requireEndpoint(db: Db, endpointId: string): Promise<void> {
  const endpoint = await db
    .select({ id: webhookEndpoints.id })
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.id, endpointId))
    .get();
  if (!endpoint) throw new AppError("not-found", "no webhook endpoint with this id");
}

/** Newest first, as every admin list of things that happen (contract §10 paging). */
export async function listDeliveries(
  deps: { db: Db },
  endpointId: string,
  query: { limit: number; cursor?: string; status?: Status },
): Promise<Page<WireDelivery>> {
  await requireEndpoint(deps.db, endpointId);
  const rows = await deps.db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.endpointId, endpointId),
        query.status ? eq(webhookDeliveries.status, query.status) : undefined,
        pastCursor(query.cursor, webhookDeliveries.createdAt, webhookDeliveries.id, "desc"),
      ),
    )
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(query.limit + 1)
    .all();
  return toPage(rows, query.limit, (row) => [row.createdAt, row.id], toWireDelivery);
}

/**
 * Sends a delivery again, whatever became of it (delivered ones too: a receiver that lost what it stored asks for
 * it again, and deduplicates on the event id if it did not). It is pending from now on, and one message goes to the
 * deliveries queue, whose retries then apply as to any delivery.
 */
export async function redeliver(
  deps: { db: Db; queue: Queue },
  endpointId: string,
  deliveryId: string,
): Promise<WireDelivery> {
  await requireEndpoint(deps.db, endpointId);
  const row = await deps.db
    .update(webhookDeliveries)
    .set({ status: "pending", deliveredAt: null })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.endpointId, endpointId)))
    .returning()
    .get();
  if (!row) throw new AppError("not-found", "no delivery with this id at this endpoint");
  const message: DeliveryMessage = { deliveryId: row.id };
  await deps.queue.send(message, { contentType: "json" });
  return toWireDelivery(row);
}

/**
 * The dead-letter queue's word on a delivery message that ran out of retries: the delivery is failed (the console
 * shows it, and redelivery sends it again). A delivered one stays delivered: a duplicate message can die after
 * another copy got through. Other dead letters (events) are not ours.
 */
export async function markDeliveryDead(db: Db, body: unknown, _now: number): Promise<void> {
  if (originOf(body) !== "deliveries") return;
  await db
    .update(webhookDeliveries)
    .set({ status: "failed" })
    .where(
      and(
        eq(webhookDeliveries.id, (body as DeliveryMessage).deliveryId),
        ne(webhookDeliveries.status, "delivered"),
      ),
    );
}
