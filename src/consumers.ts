import { type Config, getConfig } from "./config";
import { createDb } from "./db/client";
import type { Env } from "./env";
import { consumeEvents, type EventConsumer } from "./events/consume";
import { keepDeadLetters } from "./events/dead-letters";
import { queueRole } from "./events/queues";
import { retryDelaySeconds } from "./events/retry";
import type { DeliveryMessage, StreamEvent } from "./events/types";
import { mirrorConsumer } from "./mirror";
import { deliverWebhooks, markDeliveryDead, webhookFanOut } from "./webhooks";

/**
 * The Worker's `queue` handler: the event stream's consumers (contract move-in §5), composed here as app.ts composes
 * the routes. EVENTS feeds the Postgres mirror and fans out to webhook endpoints; WEBHOOK_DELIVERIES posts to them;
 * the dead-letter queue keeps what ran out of retries in D1 for the console.
 */
export async function handleQueueBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const config = getConfig(env);
  // The home database: webhook endpoints, deliveries and dead letters are global, in no user's shard.
  const db = createDb(env.DB);
  const now = Date.now;
  switch (queueRole(batch.queue)) {
    case "events":
      return consumeStream(batch as MessageBatch<StreamEvent>, env, config);
    case "deliveries":
      return deliverWebhooks(batch as MessageBatch<DeliveryMessage>, { db, config, env, now });
    case "deadLetters":
      return keepDeadLetters(db, batch, now(), config.AUTH_EVENTS_RETRY_DELAY_SECONDS, (body) =>
        markDeliveryDead(db, body, now()),
      );
    default:
      // A queue wrangler.toml binds but this code does not know: kept for a deployment that does.
      console.error(JSON.stringify({ level: "error", what: "unknown queue", queue: batch.queue }));
      batch.retryAll();
  }
}

async function consumeStream(batch: MessageBatch<StreamEvent>, env: Env, config: Config): Promise<void> {
  const db = createDb(env.DB);
  const consumers: EventConsumer[] = [];
  try {
    consumers.push(await webhookFanOut({ db, config, queue: env.WEBHOOK_DELIVERIES, now: Date.now }));
    const mirror = mirrorConsumer(env, config);
    if (mirror) consumers.push(mirror);
  } catch (error) {
    // A consumer that cannot even start fails the batch, with the backoff of a failed event (not at once).
    console.error(
      JSON.stringify({ level: "error", what: "event consumers did not start", detail: String(error) }),
    );
    const attempts = Math.max(...batch.messages.map((message) => message.attempts));
    batch.retryAll({ delaySeconds: retryDelaySeconds(attempts, config.AUTH_EVENTS_RETRY_DELAY_SECONDS) });
    return;
  }
  try {
    await consumeEvents(batch, consumers, config.AUTH_EVENTS_RETRY_DELAY_SECONDS);
  } finally {
    await Promise.allSettled(consumers.map((consumer) => consumer.close?.()));
  }
}
