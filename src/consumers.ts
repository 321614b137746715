import { type Config, getConfig } from "./config";
import { createDb } from "./db/client";
import { shardsOf } from "./db/shards";
import type { Env } from "./env";
import { consumeEvents, type EventConsumer } from "./events/consume";
import { keepDeadLetters } from "./events/dead-letters";
import { queueRole } from "./events/queues";
import { retryDelaySeconds } from "./events/retry";
import type { DeliveryMessage, StreamEvent } from "./events/types";
import { useKeyStore } from "./lib/keys";
import { mirrorConsumer } from "./mirror";
import { backchannelLogoutFanOut, deliverLogoutTokens } from "./oauth2";
import { deliverWebhooks, markDeliveryDead, webhookFanOut } from "./webhooks";

/**
 * The Worker's `queue` handler: the event stream's consumers (contract move-in §5), composed here as app.ts composes
 * the routes. EVENTS feeds the Postgres mirror, fans out to webhook endpoints and finds the OAuth2 clients to tell of
 * an ended session; WEBHOOK_DELIVERIES posts to the endpoints, LOGOUT_DELIVERIES posts logout tokens to the clients
 * (back-channel logout); the dead-letter queue keeps what ran out of retries in D1 for the console.
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
    case "logoutDeliveries":
      // Logout tokens are signed like ID tokens, with the key set the fetch handler uses (src/index.ts).
      useKeyStore(config, env.DB);
      return deliverLogoutTokens(batch, { db, config, outbound: outboundOf(env), now });
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
    if (env.LOGOUT_DELIVERIES) {
      const shards = shardsOf(env, config.AUTH_D1_SHARDS);
      consumers.push(backchannelLogoutFanOut({ shards, queue: env.LOGOUT_DELIVERIES }));
    }
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

/**
 * Outbound HTTP: `env.OUTBOUND` when bound (tests bind a fake), else the platform's, wrapped (src/http/context.ts
 * says why not `fetch` itself).
 */
function outboundOf(env: Env): typeof fetch {
  return env.OUTBOUND
    ? (input, init) => env.OUTBOUND!.fetch(input, init)
    : (input, init) => fetch(input, init);
}
