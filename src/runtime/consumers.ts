import type { Config } from "../config";
import { loadSlotMap } from "../db/slot-map";
import type { Env } from "../env";
import { consumeEvents, type EventConsumer } from "../events/consume";
import { keepDeadLetters } from "../events/dead-letters";
import { queueRole } from "../events/queues";
import { retryDelaySeconds } from "../events/retry";
import type { StreamEvent } from "../events/types";
import type { Deps } from "../http/deps";
import { getConfig } from "./config";
import type { Feature } from "./feature";
import { FEATURES } from "./features";
import { createServices, detached } from "./services";

/**
 * The Worker's `queue` handler: the event stream's consumers (contract move-in §5), composed here from the features
 * as app.ts composes their routes. EVENTS feeds every feature's consumer (the Postgres mirror, the webhooks' fan-out,
 * the OAuth2 clients to tell of an ended session); a feature's own queue goes to it (WEBHOOK_DELIVERIES posts to the
 * endpoints, LOGOUT_DELIVERIES posts logout tokens to the clients); the dead-letter queue keeps what ran out of
 * retries in D1 for the console, and tells the feature whose message it was.
 */
export async function handleQueueBatch(
  batch: MessageBatch<unknown>,
  env: Env,
  // The handler passes `ctx.waitUntil`; a test's call lets the work run on.
  background: (work: Promise<unknown>) => void = detached,
): Promise<void> {
  const config = getConfig(env);
  // Several shards: route with the slot map (src/db/slot-map.ts); a slot being moved fails its messages, retried.
  await loadSlotMap(env, config.shards);
  // The home database (`services.db`): webhook endpoints, deliveries and dead letters are global, in no user's shard.
  const services = createServices(config, env, { background });
  const role = queueRole(batch.queue);
  switch (role) {
    case "events":
      return consumeStream(batch as MessageBatch<StreamEvent>, services, config);
    case "deadLetters":
      return keepDeadLetters(services.db, batch, services.now(), config.events.retryDelaySeconds, (body) =>
        eachFeature((feature) => feature.deadLetter?.(body, services)),
      );
    case null:
      break;
    default: {
      const consume = FEATURES.find((feature) => feature.queues?.[role])?.queues?.[role];
      if (consume) return consume(batch, services);
    }
  }
  // A queue wrangler.toml binds but this code does not know: kept for a deployment that does.
  console.error(JSON.stringify({ level: "error", what: "unknown queue", queue: batch.queue }));
  batch.retryAll();
}

/** Runs `work` for each feature in the list's order, one after the other. */
async function eachFeature(work: (feature: Feature) => Promise<void> | undefined): Promise<void> {
  for (const feature of FEATURES) await work(feature);
}

async function consumeStream(
  batch: MessageBatch<StreamEvent>,
  services: Deps,
  config: Config,
): Promise<void> {
  const consumers: EventConsumer[] = [];
  try {
    for (const feature of FEATURES) {
      const consumer = await feature.eventConsumer?.(services);
      if (consumer) consumers.push(consumer);
    }
  } catch (error) {
    // A consumer that cannot even start fails the batch, with the backoff of a failed event (not at once).
    console.error(
      JSON.stringify({ level: "error", what: "event consumers did not start", detail: String(error) }),
    );
    const attempts = Math.max(...batch.messages.map((message) => message.attempts));
    batch.retryAll({ delaySeconds: retryDelaySeconds(attempts, config.events.retryDelaySeconds) });
    return;
  }
  try {
    await consumeEvents(batch, consumers, config.events.retryDelaySeconds);
  } finally {
    await Promise.allSettled(consumers.map((consumer) => consumer.close?.()));
  }
}
