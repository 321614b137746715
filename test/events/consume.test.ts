// The EVENTS queue's consumer loop (src/events/consume.ts) and the dead-letter keeper (src/events/dead-letters.ts),
// run on message batches as Cloudflare Queues hands them to the Worker (`createMessageBatch`, `getQueueResult`).
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { consumeEvents, type EventConsumer } from "../../src/events/consume";
import { keepDeadLetters, redeliverDeadLetters } from "../../src/events/dead-letters";
import { QUEUES } from "../../src/events/queues";
import { retryDelaySeconds } from "../../src/events/retry";
import type { StreamEvent } from "../../src/events/types";

function event(subject: string, sequence: number, type: StreamEvent["type"] = "user.updated"): StreamEvent {
  return {
    id: `evt_${crypto.randomUUID().replaceAll("-", "")}`,
    type,
    timestamp: new Date().toISOString(),
    subject,
    sequence,
    data: {},
  };
}

function batchOf(events: StreamEvent[], attempts = 1, queue: string = QUEUES.events) {
  return createMessageBatch<StreamEvent>(
    queue,
    events.map((body, index) => ({ id: `m${index}-${body.id}`, timestamp: new Date(), attempts, body })),
  );
}

async function run(batch: MessageBatch<StreamEvent>, consumers: EventConsumer[], firstDelay = 10) {
  const ctx = createExecutionContext();
  await consumeEvents(batch, consumers, firstDelay);
  return getQueueResult(batch, ctx);
}

describe("the events consumer", () => {
  // Threat: the audit's internal events reaching a webhook receiver or the mirror, which never asked for them.
  it("gives an internal type (audit.recorded) only to a consumer that takes it, and prepares each with what it sees", async () => {
    const seen: Record<string, string[]> = { public: [], audit: [] };
    const prepared: Record<string, number[]> = { public: [], audit: [] };
    const consumer = (name: "public" | "audit", takes?: EventConsumer["takes"]): EventConsumer => ({
      name,
      takes,
      prepare: async (events) => void prepared[name]!.push(events.length),
      consume: async (e) => void seen[name]!.push(e.type),
    });
    const result = await run(
      batchOf([event("u", 1), event("audit", 1, "audit.recorded"), event("audit", 2, "audit.recorded")]),
      [consumer("public"), consumer("audit", ["audit.recorded"])],
    );
    expect(seen).toEqual({
      public: ["user.updated"],
      audit: ["audit.recorded", "audit.recorded", "user.updated"],
    });
    expect(prepared).toEqual({ public: [1], audit: [3] });
    expect(result.explicitAcks).toHaveLength(3);
  });

  it("gives each subject's events to the consumers in sequence order, whatever order the queue delivered", async () => {
    const seen: string[] = [];
    const consumer: EventConsumer = {
      name: "recorder",
      consume: async (e) => {
        seen.push(`${e.subject}#${e.sequence}`);
      },
    };
    const result = await run(
      batchOf([event("b", 2), event("a", 3), event("b", 1), event("a", 1), event("a", 2)]),
      [consumer],
    );
    expect(seen).toEqual(["a#1", "a#2", "a#3", "b#1", "b#2"]);
    expect(result.explicitAcks).toHaveLength(5);
    expect(result.retryMessages).toEqual([]);
  });

  // Order under faults: when a consumer fails on a subject's event, that event and the subject's later ones in the
  // batch are retried together (with the backoff), so no consumer ever sees #3 applied before #2.
  it("retries a failed event and the same subject's later ones, with the exponential delay; others go on", async () => {
    const seen: string[] = [];
    const consumer: EventConsumer = {
      name: "flaky",
      consume: async (e) => {
        if (e.subject === "a" && e.sequence === 2) throw new Error("mirror down");
        seen.push(`${e.subject}#${e.sequence}`);
      },
    };
    const events = [event("a", 1), event("a", 2), event("a", 3), event("b", 1)];
    // The pool's getQueueResult does not report a retry's delay: these messages record what they were told.
    const outcomes = new Map<string, string>();
    const messages = events.map((body) => ({
      id: body.id,
      timestamp: new Date(),
      attempts: 3,
      body,
      ack: () => void outcomes.set(body.id, "ack"),
      retry: (options?: QueueRetryOptions) => void outcomes.set(body.id, `retry ${options?.delaySeconds}`),
    }));
    const batch = { queue: QUEUES.events, messages } as unknown as MessageBatch<StreamEvent>;
    await consumeEvents(batch, [consumer], 10);
    expect(seen).toEqual(["a#1", "b#1"]);
    // Third attempt: 10 s · 2² = 40 s.
    expect(events.map((e) => outcomes.get(e.id))).toEqual(["ack", "retry 40", "retry 40", "ack"]);
  });

  it("backs off exponentially up to twelve hours, and 16 retries last more than a day", () => {
    expect([1, 2, 3, 4].map((n) => retryDelaySeconds(n, 10))).toEqual([10, 20, 40, 80]);
    expect(retryDelaySeconds(40, 10)).toBe(12 * 3600);
    let waited = 0;
    for (let attempt = 1; attempt <= 16; attempt++) waited += retryDelaySeconds(attempt, 10);
    expect(waited).toBeGreaterThan(24 * 3600);
  });
});

async function letters(ids: string[]): Promise<{ id: string; queue: string }[]> {
  const { results } = await env.DB.prepare(
    `SELECT id, queue FROM dead_letters WHERE id IN (${ids.map(() => "?").join(",")})`,
  )
    .bind(...ids)
    .all<{ id: string; queue: string }>();
  return results;
}

describe("dead letters", () => {
  it("keeps what ran out of retries, lists it, and sends it back to the queue it failed on", async () => {
    const db = createDb(env.DB);
    const lost = event(crypto.randomUUID(), 1, "user.created");
    const delivery = { deliveryId: crypto.randomUUID() };
    const batch = createMessageBatch<unknown>(QUEUES.deadLetters, [
      { id: `dl-${lost.id}`, timestamp: new Date(), attempts: 17, body: lost },
      { id: `dl-${delivery.deliveryId}`, timestamp: new Date(), attempts: 17, body: delivery },
    ]);
    const ended: unknown[] = [];
    await keepDeadLetters(db, batch, Date.now(), 10, async (body) => {
      ended.push(body);
    });
    // Delivered twice by the queue (at least once): kept once.
    await keepDeadLetters(db, batch, Date.now(), 10);
    const ours = await letters([`dl-${lost.id}`, `dl-${delivery.deliveryId}`]);
    expect(ours.map((letter) => letter.queue).sort()).toEqual(["deliveries", "events"]);
    expect(ended).toEqual([lost, delivery]);

    const sent: { queue: string; body: unknown }[] = [];
    const queues = {
      events: {
        send: async (body: unknown) => void sent.push({ queue: "events", body }),
      } as unknown as Queue,
      deliveries: {
        send: async (body: unknown) => void sent.push({ queue: "deliveries", body }),
      } as unknown as Queue,
    };
    const count = await redeliverDeadLetters(db, queues, [`dl-${lost.id}`, `dl-${delivery.deliveryId}`]);
    expect(count).toBe(2);
    expect(sent).toEqual(
      expect.arrayContaining([
        { queue: "events", body: lost },
        { queue: "deliveries", body: delivery },
      ]),
    );
    expect(await letters([`dl-${lost.id}`, `dl-${delivery.deliveryId}`])).toEqual([]);
  });

  // Fault: D1 fails while a dead letter is being kept. The letter already used up its retries; acknowledging it now
  // would lose the event for good, so it is retried with the backoff instead.
  it("a letter that cannot be kept is retried, not dropped", async () => {
    const outcomes: string[] = [];
    const body = event(crypto.randomUUID(), 1, "user.created");
    const message = {
      id: `dl-${body.id}`,
      timestamp: new Date(),
      attempts: 2,
      body,
      ack: () => void outcomes.push("ack"),
      retry: (options?: QueueRetryOptions) => void outcomes.push(`retry ${options?.delaySeconds}`),
    };
    const batch = { queue: QUEUES.deadLetters, messages: [message] } as unknown as MessageBatch<unknown>;
    await keepDeadLetters(createDb(env.DB), batch, Date.now(), 10, async () => {
      throw new Error("D1_ERROR: unavailable");
    });
    expect(outcomes).toEqual(["retry 20"]);
  });
});
