import { eq, sql } from "drizzle-orm";
import type { Config } from "../config";
import type { Db } from "../db/client";
import { webhookDeliveries, webhookEndpoints } from "../db/schema";
import type { Env } from "../env";
import { retryDelaySeconds } from "../events/retry";
import type { DeliveryMessage } from "../events/types";
import { decrypt } from "../lib/crypto";
import { OutboundFetchError, OutboundUrlRefused, postOutbound } from "../lib/outbound-fetch";
import { outboundPolicy } from "../lib/outbound-url";
import { standardWebhookHeaders } from "../lib/standard-webhooks";

/**
 * The deliveries queue's consumer (contract move-in §5.2): each message is one delivery, POSTed to its endpoint,
 * signed per Standard Webhooks with the event id as `webhook-id`. A 2xx answer delivers it; anything else (another
 * status, a redirect, no answer within 10 s, a URL the outbound-URL policy refuses now) is an attempt recorded on the
 * delivery and the message retried later with a growing delay, until the queue's retries run out and the dead-letter
 * queue marks it failed (deliveries.ts).
 */

/** Contract move-in §5.2. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** What is kept of an answer (the console shows it); read from the first 2 KB. */
const KEPT_CHARS = 500;
const READ_BYTES = 2048;
/** Deliveries of one batch in flight at once: a Worker has six simultaneous outgoing connections. */
const CONCURRENCY = 6;

export interface DeliveryDeps {
  db: Db;
  config: Config;
  env: Env;
  now: () => number;
  /** Tests shorten the 10 s bound. */
  timeoutMs?: number;
}

type Outcome = { done: true } | { done: false };

const DONE: Outcome = { done: true };

async function eachAtMost<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

function outboundOf(env: Env): typeof fetch {
  // Not `fetch` itself, which refuses to run with another `this` (src/http/context.ts says why).
  return env.OUTBOUND
    ? (input, init) => env.OUTBOUND!.fetch(input, init)
    : (input, init) => fetch(input, init);
}

async function record(
  deps: DeliveryDeps,
  id: string,
  at: number,
  answer: { status: number | null; text: string },
): Promise<Outcome> {
  const delivered = answer.status !== null && answer.status >= 200 && answer.status < 300;
  const row = await deps.db
    .update(webhookDeliveries)
    .set({
      // A failed delivery sent again from the dead letters is pending while it is retried; one that another copy of
      // its message delivered meanwhile stays delivered, and this copy ends here.
      status: delivered
        ? "delivered"
        : sql`CASE WHEN ${webhookDeliveries.status} = 'delivered' THEN 'delivered' ELSE 'pending' END`,
      attempts: sql`${webhookDeliveries.attempts} + 1`,
      lastStatus: answer.status,
      lastResponse: answer.text.slice(0, KEPT_CHARS),
      lastAttemptAt: at,
      ...(delivered ? { deliveredAt: at } : {}),
    })
    .where(eq(webhookDeliveries.id, id))
    .returning({ status: webhookDeliveries.status })
    .get();
  return { done: !row || row.status === "delivered" };
}

/** One attempt at one delivery. */
async function attempt(deps: DeliveryDeps, deliveryId: string): Promise<Outcome> {
  const row = await deps.db
    .select({
      id: webhookDeliveries.id,
      eventId: webhookDeliveries.eventId,
      payload: webhookDeliveries.payload,
      status: webhookDeliveries.status,
      url: webhookEndpoints.url,
      secretSealed: webhookEndpoints.secretSealed,
      disabled: webhookEndpoints.disabled,
    })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .where(eq(webhookDeliveries.id, deliveryId))
    .get();
  // The endpoint (and its deliveries) deleted, or switched off: nothing to send. Delivered already: a duplicate.
  if (!row || row.disabled || row.status === "delivered") return DONE;
  const secret = await decrypt(deps.config.secrets.encryptionKey, row.secretSealed);
  const at = deps.now();
  const timeoutMs = deps.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  try {
    const answer = await postOutbound(outboundOf(deps.env), row.url, outboundPolicy(deps.config), {
      headers: {
        "content-type": "application/json",
        ...standardWebhookHeaders(secret, row.eventId, row.payload, new Date(at)),
      },
      body: row.payload,
      timeoutMs,
      keepBytes: READ_BYTES,
    });
    return record(deps, row.id, at, answer);
  } catch (error) {
    // Checked again here, not only at registration: what counts is the URL as it is when the post goes out.
    if (error instanceof OutboundUrlRefused) {
      return record(deps, row.id, at, { status: null, text: error.message });
    }
    if (error instanceof OutboundFetchError) {
      return record(deps, row.id, at, { status: null, text: error.reason });
    }
    throw error;
  }
}

export async function deliverWebhooks(
  batch: MessageBatch<DeliveryMessage>,
  deps: DeliveryDeps,
): Promise<void> {
  const retry = (message: Message<DeliveryMessage>) =>
    message.retry({
      delaySeconds: retryDelaySeconds(message.attempts, deps.config.events.retryDelaySeconds),
    });
  await eachAtMost(batch.messages, CONCURRENCY, async (message) => {
    const deliveryId = message.body?.deliveryId;
    if (typeof deliveryId !== "string") {
      // Not a message this code sends: retrying it would only delay the dead-letter queue that keeps it.
      console.error(
        JSON.stringify({ level: "error", what: "webhook delivery: malformed message", id: message.id }),
      );
      message.ack();
      return;
    }
    try {
      const outcome = await attempt(deps, deliveryId);
      if (outcome.done) message.ack();
      else retry(message);
    } catch (error) {
      // D1 or the key failed us, not the receiver: nothing was recorded, the message comes again.
      console.error(
        JSON.stringify({
          level: "error",
          what: "webhook delivery failed",
          delivery: deliveryId,
          detail: String(error),
        }),
      );
      retry(message);
    }
  });
}
