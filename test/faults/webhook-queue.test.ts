// The `WEBHOOK_DELIVERIES` queue failing under the webhooks' fan-out (src/webhooks/fan-out.ts): `sendBatch` refused,
// or taken with its answer lost. The stream's batch, the fan-out and the deliveries run as the queue handler runs them
// (src/events/consume.ts, src/webhooks/deliver.ts), with batches the test builds and a receiver that counts its
// posts. The threat named above each test is what it keeps out.
import { env } from "cloudflare:test";
import { afterAll, describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { consumeEvents } from "../../src/events/consume";
import type { DeliveryMessage, StreamEvent } from "../../src/events/types";
import { getConfig } from "../../src/runtime/config";
import { deliverWebhooks, webhookFanOut } from "../../src/webhooks";
import { failingQueue } from "../support/faults";
import { admin, createEndpoint, receiverUrl } from "../webhooks/support";

const db = createDb(env.DB);
const config = getConfig(env);
const made: string[] = [];
afterAll(async () => {
  for (const id of made) await admin("DELETE", `/webhooks/${id}`);
});

/** An endpoint of a type no other test causes, so the real consumers leave its deliveries to this file. */
async function endpoint() {
  const created = await createEndpoint({ url: receiverUrl("queue-fault"), events: ["file.updated"] });
  made.push(created.id);
  return created;
}

function event(): StreamEvent {
  return {
    id: `evt_${crypto.randomUUID().replace(/-/g, "")}`,
    type: "file.updated",
    timestamp: new Date().toISOString(),
    subject: `queue-fault-${crypto.randomUUID()}`,
    sequence: 1,
    data: { file: { id: "f1" } },
  };
}

/** The deliveries queue as a list: what was sent to it, in order. */
function recordingQueue() {
  const sent: string[] = [];
  const queue = {
    send: async (body: DeliveryMessage) => void sent.push(body.deliveryId),
    sendBatch: async (messages: { body: DeliveryMessage }[]) =>
      void sent.push(...messages.map((m) => m.body.deliveryId)),
  } as unknown as Queue;
  return { queue, sent };
}

/** A batch as the runtime hands it, remembering whether each message was acknowledged or retried. */
function batchOf<T>(bodies: T[], queue: string, attempts = 1) {
  const outcomes: ("acked" | "retried")[] = [];
  const messages = bodies.map((body, index) => ({
    id: `m${index}`,
    timestamp: new Date(),
    attempts,
    body,
    ack: () => {
      outcomes[index] = "acked";
    },
    retry: () => {
      outcomes[index] = "retried";
    },
  }));
  const batch = { queue, messages, ackAll: () => {}, retryAll: () => {} } as unknown as MessageBatch<T>;
  return { batch, outcomes };
}

/** The event stream's consumer run on one event, as the queue handler runs it with the webhooks' fan-out. */
async function fanOut(one: StreamEvent, queue: Queue, attempts = 1) {
  const { batch, outcomes } = batchOf([one], "edge-auth-events", attempts);
  await consumeEvents(batch, [await webhookFanOut({ db, config, queue, now: Date.now })], 1);
  return outcomes[0];
}

/** A receiver that takes every post (2xx), counting the posts per event id. */
function receiver() {
  const posts: string[] = [];
  const outbound = {
    fetch: async (_input: RequestInfo | URL, init?: RequestInit) => {
      posts.push(JSON.parse(String(init?.body)).id);
      return new Response("ok", { status: 200 });
    },
  };
  return { env: { ...env, OUTBOUND: outbound } as typeof env, posts };
}

async function deliver(deliveryIds: string[], receiverEnv: typeof env) {
  const { batch, outcomes } = batchOf<DeliveryMessage>(
    deliveryIds.map((deliveryId) => ({ deliveryId })),
    "edge-auth-webhook-deliveries",
  );
  await deliverWebhooks(batch, { db, config, env: receiverEnv, now: Date.now });
  return outcomes;
}

/**
 * What went to the queue for `endpointId`'s deliveries of the event: other enabled endpoints (earlier tests', other
 * files') subscribed to the type get theirs in the same batches.
 */
async function sentFor(sent: string[], endpointId: string, eventId: string): Promise<string[]> {
  const ours = new Set((await deliveriesOfEvent(endpointId, eventId)).map((row) => row.id));
  return sent.filter((id) => ours.has(id));
}

async function deliveriesOfEvent(endpointId: string, eventId: string) {
  const { results } = await env.DB.prepare(
    "SELECT id, status, attempts FROM webhook_deliveries WHERE endpoint_id = ? AND event_id = ?",
  )
    .bind(endpointId, eventId)
    .all<{ id: string; status: string; attempts: number }>();
  return results;
}

describe("the fan-out's sendBatch failing", () => {
  // Threat: an event acknowledged while its deliveries never reached the queue: the receiver never hears of it.
  it("refused: the event is retried; its retry queues the same delivery, which reaches the receiver once", async () => {
    const created = await endpoint();
    const one = event();
    const { queue, sent } = recordingQueue();
    const { binding, fault } = failingQueue(queue, { match: /^sendBatch$/, times: 1 });
    expect(await fanOut(one, binding)).toBe("retried");
    expect(fault.failures).toBe(1);
    expect(sent).toEqual([]);
    const [row] = await deliveriesOfEvent(created.id, one.id);
    expect(row).toMatchObject({ status: "pending", attempts: 0 });
    // The stream's retry of the event: the same delivery (no second row), now queued.
    expect(await fanOut(one, binding, 2)).toBe("acked");
    expect(await deliveriesOfEvent(created.id, one.id)).toHaveLength(1);
    const queued = await sentFor(sent, created.id, one.id);
    expect(queued).toEqual([row!.id]);
    const taker = receiver();
    expect(await deliver(queued, taker.env)).toEqual(["acked"]);
    expect(taker.posts).toEqual([one.id]);
    expect(await deliveriesOfEvent(created.id, one.id)).toEqual([
      { id: row!.id, status: "delivered", attempts: 1 },
    ]);
  });

  // Threat: the queue took the messages and only its answer was lost: the event's retry sends the receiver, which
  // already took the delivery, the same event again.
  it("taken, answer lost; the delivery posted before the event's retry: the retry queues nothing, one post", async () => {
    const created = await endpoint();
    const one = event();
    const { queue, sent } = recordingQueue();
    const { binding } = failingQueue(queue, { match: /^sendBatch$/, when: "after", times: 1 });
    expect(await fanOut(one, binding)).toBe("retried");
    const first = await sentFor(sent, created.id, one.id);
    expect(first).toHaveLength(1);
    const taker = receiver();
    expect(await deliver(first, taker.env)).toEqual(["acked"]);
    expect(await fanOut(one, binding, 2)).toBe("acked");
    expect(await sentFor(sent, created.id, one.id)).toEqual(first);
    expect(taker.posts).toEqual([one.id]);
    expect(await deliveriesOfEvent(created.id, one.id)).toMatchObject([{ status: "delivered", attempts: 1 }]);
  });

  // Threat: as above, with the event's retry first: two messages for one delivery, both reaching the receiver.
  it("taken, answer lost; the event's retry first: the delivery is queued twice and posted once", async () => {
    const created = await endpoint();
    const one = event();
    const { queue, sent } = recordingQueue();
    const { binding } = failingQueue(queue, { match: /^sendBatch$/, when: "after", times: 1 });
    expect(await fanOut(one, binding)).toBe("retried");
    expect(await fanOut(one, binding, 2)).toBe("acked");
    const queued = await sentFor(sent, created.id, one.id);
    expect(queued).toHaveLength(2);
    expect(new Set(queued).size).toBe(1);
    const taker = receiver();
    // Each copy in its own batch, as the queue hands out messages sent apart.
    expect(await deliver([queued[0]!], taker.env)).toEqual(["acked"]);
    expect(await deliver([queued[1]!], taker.env)).toEqual(["acked"]);
    expect(taker.posts).toEqual([one.id]);
    expect(await deliveriesOfEvent(created.id, one.id)).toMatchObject([{ status: "delivered", attempts: 1 }]);
  });
});
