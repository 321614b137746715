import { retryDelaySeconds } from "./retry";
import { type InternalEventType, isInternalEventType, type StreamEvent } from "./types";

/**
 * What consumes the stream (the Postgres mirror, the webhooks' fan-out): made once per batch, so it can load or open
 * what the whole batch needs once, then called per event, then closed. `consume` must be idempotent: a message is
 * delivered at least once, and a retry calls every consumer again, including those that succeeded the first time.
 */
export interface EventConsumer {
  name: string;
  /** The types outside the public stream it takes (`INTERNAL_EVENT_TYPES`); it never sees the others. */
  takes?: readonly InternalEventType[];
  /**
   * Called once per batch, before `consume`, with the batch's events this consumer sees: for a consumer that ships
   * them together (the audit's export posts one request per batch) and then answers `consume` per event from what
   * that request did. It must not throw: an event it could not ship fails in `consume`, and is retried alone.
   */
  prepare?(events: StreamEvent[]): Promise<void>;
  consume(event: StreamEvent): Promise<void>;
  close?(): Promise<void>;
}

/**
 * Runs one batch of the EVENTS queue through the consumers, in order per subject (a queue does not keep order; the
 * sequence does), and acknowledges each message that every consumer took. A message a consumer failed on is retried
 * after an exponentially growing delay, and after the queue's max_retries it becomes a dead letter (wrangler.toml).
 */
export async function consumeEvents(
  batch: MessageBatch<StreamEvent>,
  consumers: EventConsumer[],
  firstDelaySeconds: number,
): Promise<void> {
  const messages = [...batch.messages].sort(
    (a, b) => a.body.subject.localeCompare(b.body.subject) || a.body.sequence - b.body.sequence,
  );
  const sees = (consumer: EventConsumer, event: StreamEvent) =>
    !isInternalEventType(event.type) || (consumer.takes?.includes(event.type) ?? false);
  await Promise.allSettled(
    consumers.map((consumer) =>
      consumer.prepare?.(messages.map((message) => message.body).filter((event) => sees(consumer, event))),
    ),
  );
  const failedSubjects = new Set<string>();
  for (const message of messages) {
    const event = message.body;
    // A later event of a subject whose earlier one failed waits for it, so that consumers see them in order.
    if (failedSubjects.has(event.subject)) {
      message.retry({ delaySeconds: retryDelaySeconds(message.attempts, firstDelaySeconds) });
      continue;
    }
    const outcomes = await Promise.allSettled(
      consumers.map((consumer) => (sees(consumer, event) ? consumer.consume(event) : undefined)),
    );
    const failed = outcomes.flatMap((outcome, index) =>
      outcome.status === "rejected" ? [{ consumer: consumers[index]!.name, reason: outcome.reason }] : [],
    );
    if (failed.length > 0) {
      failedSubjects.add(event.subject);
      console.error(
        JSON.stringify({
          level: "error",
          what: "event consumer failed",
          event: event.id,
          type: event.type,
          attempts: message.attempts,
          failed: failed.map(({ consumer, reason }) => ({ consumer, detail: String(reason) })),
        }),
      );
      message.retry({ delaySeconds: retryDelaySeconds(message.attempts, firstDelaySeconds) });
    } else {
      message.ack();
    }
  }
}
