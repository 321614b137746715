import { eq, inArray } from "drizzle-orm";
import type { Db } from "../db/client";
import { deadLetters } from "../db/schema";
import type { QueueRole } from "./queues";
import { retryDelaySeconds } from "./retry";
import type { DeliveryMessage, StreamEvent } from "./types";

/**
 * A dead letter's body tells which queue it failed on: an event has a type and a sequence, a delivery an id, a
 * back-channel logout notice its `kind` (src/oauth2/logout/backchannel-fan-out.ts `LogoutDeliveryMessage`).
 */
export function originOf(body: unknown): Exclude<QueueRole, "deadLetters"> | null {
  if (typeof body !== "object" || body === null) return null;
  if ("deliveryId" in body && typeof (body as DeliveryMessage).deliveryId === "string") return "deliveries";
  // The OAuth2 server's deliveries to clients: logout tokens, and CIBA pings (src/oauth2/ciba/ping.ts).
  if ("kind" in body && (body.kind === "backchannel-logout" || body.kind === "ciba-ping"))
    return "logoutDeliveries";
  if ("sequence" in body && "type" in body && typeof (body as StreamEvent).id === "string") return "events";
  return null;
}

/**
 * The dead-letter queue's consumer: every message that ran out of retries is kept in D1 (the console lists them and
 * can send them again), then acknowledged. Keyed by the queue's message id, so a dead letter delivered twice is kept
 * once. `also` lets the owner of a message record its end (a webhook delivery marked failed). A letter that cannot be
 * kept (D1 unavailable) is retried with the stream's backoff, for as long as the others (wrangler.toml): these are
 * messages that already used up their retries, and dropping them would lose the event for good.
 */
export async function keepDeadLetters(
  db: Db,
  batch: MessageBatch<unknown>,
  now: number,
  firstDelaySeconds: number,
  also?: (body: unknown) => Promise<void>,
): Promise<void> {
  for (const message of batch.messages) {
    try {
      const origin = originOf(message.body) ?? "unknown";
      await db
        .insert(deadLetters)
        .values({ id: message.id, queue: origin, body: message.body, attempts: message.attempts, at: now })
        .onConflictDoNothing();
      if (also) await also(message.body);
      message.ack();
    } catch (error) {
      console.error(JSON.stringify({ level: "error", what: "dead letter not kept", detail: String(error) }));
      message.retry({ delaySeconds: retryDelaySeconds(message.attempts, firstDelaySeconds) });
    }
  }
}

/**
 * Sends dead letters back to the queue they failed on, and forgets them once the queue has them. Returns how many
 * went back; a letter whose origin is unknown, or whose queue the caller did not pass, stays.
 */
export async function redeliverDeadLetters(
  db: Db,
  queues: { events: Queue; deliveries: Queue; logoutDeliveries?: Queue },
  ids: string[],
): Promise<number> {
  if (ids.length === 0) return 0;
  const letters = await db.select().from(deadLetters).where(inArray(deadLetters.id, ids)).all();
  let sent = 0;
  for (const letter of letters) {
    const origin = originOf(letter.body);
    const queue = origin ? queues[origin] : undefined;
    if (!queue) continue;
    await queue.send(letter.body, { contentType: "json" });
    await db.delete(deadLetters).where(eq(deadLetters.id, letter.id));
    sent++;
  }
  return sent;
}
