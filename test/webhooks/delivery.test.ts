// The fan-out and one delivery, called directly with batches the test builds (contract move-in §5.2): what is
// posted and how, each outcome recorded, the retry's delay, and the faults a queue run cannot stage quickly (a
// receiver that hangs for the whole 10 s, a URL that became refused). The real queues are in end-to-end.test.ts and
// retries.test.ts. The threat named above each test is what it keeps out.
import { env } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { afterAll, describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { retryDelaySeconds } from "../../src/events/retry";
import type { DeliveryMessage, StreamEvent } from "../../src/events/types";
import { getConfig } from "../../src/runtime/config";
import { deliverWebhooks, markDeliveryDead, webhookFanOut } from "../../src/webhooks";
import { DELIVERY_TIMEOUT_MS } from "../../src/webhooks/deliver";
import { admin, createEndpoint, deliveriesOf, receiverUrl } from "./support";

const db = createDb(env.DB);
// The default first delay: the pool's consumers retry at once (AUTH_EVENTS_RETRY_DELAY_SECONDS=0, vitest.config.ts),
// but the consumer called directly here must ask for the growing schedule.
const config = { ...getConfig(env), events: { retryDelaySeconds: 10 } };
const made: string[] = [];
afterAll(async () => {
  for (const id of made) await admin("DELETE", `/webhooks/${id}`);
});

/** Endpoints of a type no other test causes, so the real consumers leave them to this file. */
async function endpoint(events = ["file.updated"], tag = "direct") {
  const created = await createEndpoint({ url: receiverUrl(tag), events });
  made.push(created.id);
  return created;
}

function event(overrides: Partial<StreamEvent> = {}): StreamEvent {
  return {
    id: `evt_${crypto.randomUUID().replace(/-/g, "")}`,
    type: "file.updated",
    timestamp: new Date().toISOString(),
    subject: `direct-${crypto.randomUUID()}`,
    sequence: 1,
    data: { file: { id: "f1", name: "café ✓.txt" } },
    ...overrides,
  };
}

function recordingQueue() {
  const sent: DeliveryMessage[] = [];
  const queue = {
    send: async (body: DeliveryMessage) => void sent.push(body),
    sendBatch: async (messages: { body: DeliveryMessage }[]) =>
      void sent.push(...messages.map((m) => m.body)),
  } as unknown as Queue;
  return { queue, sent };
}

/** A batch as the runtime hands it, remembering each message's outcome and retry delay. */
function batchOf(deliveryIds: string[], attempts = 1) {
  const outcomes = new Map<string, { acked?: boolean; delaySeconds?: number }>();
  const messages = deliveryIds.map((deliveryId, index) => ({
    id: `m${index}`,
    timestamp: new Date(),
    attempts,
    body: { deliveryId },
    ack: () => outcomes.set(deliveryId, { acked: true }),
    retry: (options?: { delaySeconds?: number }) =>
      outcomes.set(deliveryId, { delaySeconds: options?.delaySeconds }),
  }));
  const batch = {
    queue: "edge-auth-webhook-deliveries",
    messages,
    ackAll: () => {},
    retryAll: () => {},
  } as unknown as MessageBatch<DeliveryMessage>;
  return { batch, outcomes };
}

interface Call {
  url: string;
  init: RequestInit & { headers: Record<string, string> };
}

function receiver(answer: (call: Call) => Response | Promise<Response>) {
  const calls: Call[] = [];
  const outbound = {
    fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
      const call = { url: String(input), init: init as Call["init"] };
      calls.push(call);
      return answer(call);
    },
  };
  return { env: { ...env, OUTBOUND: outbound } as typeof env, calls };
}

async function fannedOut(events: StreamEvent[]) {
  const { queue, sent } = recordingQueue();
  const consumer = await webhookFanOut({ db, config, queue, now: Date.now });
  for (const one of events) await consumer.consume(one);
  return sent.map((message) => message.deliveryId);
}

async function deliveryRow(id: string) {
  return env.DB.prepare("SELECT * FROM webhook_deliveries WHERE id = ?").bind(id).first<{
    status: string;
    attempts: number;
    last_status: number | null;
    last_response: string | null;
    endpoint_id: string;
  }>();
}

async function idsOf(endpointId: string, sent: string[]) {
  const rows = await deliveriesOf(endpointId);
  return sent.filter((id) => rows.some((row) => row.id === id));
}

describe("the fan-out", () => {
  // Threat: an event retried by the stream (at least once) delivered twice to a receiver that does not deduplicate
  // well, or lost when the first try's queue send failed.
  it("makes one delivery per subscribed endpoint and event, however often the event comes", async () => {
    const all = await endpoint([], "fan-all");
    const files = await endpoint(["file.updated"]);
    const users = await endpoint(["user.created"]);
    const off = await endpoint(["file.updated"]);
    await admin("PATCH", `/webhooks/${off.id}`, { disabled: true });
    const one = event();
    const first = await fannedOut([one]);
    const again = await fannedOut([one]);
    const rows = await env.DB.prepare(
      "SELECT endpoint_id, payload, status, attempts FROM webhook_deliveries WHERE event_id = ?",
    )
      .bind(one.id)
      .all<{ endpoint_id: string; payload: string; status: string; attempts: number }>();
    const mine = rows.results.filter((row) => made.includes(row.endpoint_id));
    expect(mine.map((row) => row.endpoint_id).sort()).toEqual([all.id, files.id].sort());
    // Never attempted yet: queued again on the event's retry, under the same delivery ids.
    expect((await idsOf(all.id, again)).sort()).toEqual((await idsOf(all.id, first)).sort());
    expect(await idsOf(users.id, first)).toEqual([]);
    expect(await idsOf(off.id, first)).toEqual([]);
    // The body posted is the event as contract move-in §5.2 has it, with its subject and sequence.
    expect(JSON.parse(mine[0]!.payload)).toEqual({
      id: one.id,
      type: one.type,
      timestamp: one.timestamp,
      subject: one.subject,
      sequence: 1,
      data: one.data,
    });
    // Once attempted, the deliveries queue owns its retries: a later retry of the event queues it no more.
    await env.DB.prepare("UPDATE webhook_deliveries SET attempts = 1 WHERE event_id = ?").bind(one.id).run();
    const later = await fannedOut([one]);
    expect(await idsOf(all.id, later)).toEqual([]);
  });
});

describe("one delivery", () => {
  // Threat: a forged or replayed delivery; a receiver that cannot deduplicate across retries.
  it("POSTs the stored body, signed with the endpoint's secret, the event id as webhook-id; 2xx delivers", async () => {
    const created = await endpoint();
    const one = event();
    const [deliveryId] = await idsOf(created.id, await fannedOut([one]));
    const fake = receiver(() => new Response(`ok ${"x".repeat(3000)}`, { status: 202 }));
    const { batch, outcomes } = batchOf([deliveryId!]);
    await deliverWebhooks(batch, { db, config, env: fake.env, now: Date.now });
    expect(outcomes.get(deliveryId!)).toEqual({ acked: true });
    expect(fake.calls).toHaveLength(1);
    const [call] = fake.calls;
    expect(call!.url).toBe(created.url);
    expect(call!.init.method).toBe("POST");
    expect(call!.init.redirect).toBe("manual");
    expect(call!.init.headers["content-type"]).toBe("application/json");
    expect(call!.init.headers["webhook-id"]).toBe(one.id);
    const payload = new Webhook(created.secret).verify(String(call!.init.body), call!.init.headers);
    expect(payload).toMatchObject({ id: one.id, data: { file: { name: "café ✓.txt" } } });
    const row = await deliveryRow(deliveryId!);
    expect(row).toMatchObject({ status: "delivered", attempts: 1, last_status: 202 });
    // The start of the answer, bounded.
    expect(row!.last_response).toHaveLength(500);
    // Delivered: a duplicate message is acknowledged without a second post.
    const duplicate = batchOf([deliveryId!]);
    await deliverWebhooks(duplicate.batch, { db, config, env: fake.env, now: Date.now });
    expect(duplicate.outcomes.get(deliveryId!)).toEqual({ acked: true });
    expect(fake.calls).toHaveLength(1);
  });

  it("records a failed answer and retries after the stream's growing delay", async () => {
    const created = await endpoint();
    const [deliveryId] = await idsOf(created.id, await fannedOut([event()]));
    const fake = receiver(() => new Response("database is down", { status: 503 }));
    for (const [attempts, seconds] of [
      [1, 10],
      [2, 20],
      [5, 160],
    ] as const) {
      const { batch, outcomes } = batchOf([deliveryId!], attempts);
      await deliverWebhooks(batch, { db, config, env: fake.env, now: Date.now });
      expect(outcomes.get(deliveryId!)).toEqual({ delaySeconds: seconds });
      expect(seconds).toBe(retryDelaySeconds(attempts, 10));
    }
    expect(await deliveryRow(deliveryId!)).toMatchObject({
      status: "pending",
      attempts: 3,
      last_status: 503,
      last_response: "database is down",
    });
  });

  // Threat: two copies of one message racing (at least once), the failing one undoing the other's success.
  it("leaves a delivery delivered when another copy of its message delivered it meanwhile", async () => {
    const created = await endpoint();
    const [deliveryId] = await idsOf(created.id, await fannedOut([event()]));
    const fake = receiver(async () => {
      await env.DB.prepare("UPDATE webhook_deliveries SET status = 'delivered' WHERE id = ?")
        .bind(deliveryId)
        .run();
      return new Response("late copy", { status: 500 });
    });
    const { batch, outcomes } = batchOf([deliveryId!]);
    await deliverWebhooks(batch, { db, config, env: fake.env, now: Date.now });
    expect(outcomes.get(deliveryId!)).toEqual({ acked: true });
    expect(await deliveryRow(deliveryId!)).toMatchObject({
      status: "delivered",
      attempts: 1,
      last_status: 500,
    });
  });

  // Threat: a receiver that hangs holds a consumer (and its six connections) for ever.
  it("gives up on a receiver that does not answer within the bound (10 s; shortened here), and retries", async () => {
    expect(DELIVERY_TIMEOUT_MS).toBe(10_000);
    const created = await endpoint();
    const [deliveryId] = await idsOf(created.id, await fannedOut([event()]));
    const fake = receiver(
      (call) =>
        new Promise((_, reject) =>
          call.init.signal?.addEventListener("abort", () => reject(call.init.signal?.reason)),
        ),
    );
    const started = Date.now();
    const { batch, outcomes } = batchOf([deliveryId!]);
    await deliverWebhooks(batch, { db, config, env: fake.env, now: Date.now, timeoutMs: 200 });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(outcomes.get(deliveryId!)?.delaySeconds).toBeGreaterThan(0);
    expect(await deliveryRow(deliveryId!)).toMatchObject({
      status: "pending",
      attempts: 1,
      last_status: null,
      last_response: "no answer within 200 ms",
    });
  });

  // Threat: a receiver whose host is down (no answer at all) losing the event.
  it("records an unreachable receiver as an attempt without a status, and retries", async () => {
    const created = await endpoint();
    const [deliveryId] = await idsOf(created.id, await fannedOut([event()]));
    const fake = receiver(() => Promise.reject(new TypeError("Network connection lost.")));
    const { batch, outcomes } = batchOf([deliveryId!]);
    await deliverWebhooks(batch, { db, config, env: fake.env, now: Date.now });
    expect(outcomes.get(deliveryId!)?.delaySeconds).toBeGreaterThan(0);
    expect(await deliveryRow(deliveryId!)).toMatchObject({
      status: "pending",
      attempts: 1,
      last_status: null,
      last_response: "unreachable: TypeError",
    });
  });

  // Threat: a redirect that takes the signed body (and the user data in it) somewhere the policy never checked.
  it("does not follow a redirect: it is a failed attempt", async () => {
    const created = await endpoint();
    const [deliveryId] = await idsOf(created.id, await fannedOut([event()]));
    const fake = receiver(
      () =>
        new Response(null, {
          status: 307,
          headers: { location: "http://169.254.169.254/latest/meta-data/" },
        }),
    );
    const { batch, outcomes } = batchOf([deliveryId!]);
    await deliverWebhooks(batch, { db, config, env: fake.env, now: Date.now });
    expect(fake.calls.map((call) => call.url)).toEqual([created.url]);
    expect(outcomes.get(deliveryId!)?.acked).toBeUndefined();
    expect(await deliveryRow(deliveryId!)).toMatchObject({
      status: "pending",
      attempts: 1,
      last_status: 307,
    });
  });

  // Threat: SSRF by a URL that passed at registration and is refused now (a row written before the policy, a
  // policy tightened since): the check at delivery is the one that counts.
  it("checks the URL again at delivery time, and posts nothing to one the policy refuses", async () => {
    const created = await endpoint();
    const [deliveryId] = await idsOf(created.id, await fannedOut([event()]));
    await env.DB.prepare("UPDATE webhook_endpoints SET url = ? WHERE id = ?")
      .bind("https://169.254.169.254/latest/meta-data/iam/", created.id)
      .run();
    const fake = receiver(() => new Response("secrets"));
    const { batch, outcomes } = batchOf([deliveryId!]);
    await deliverWebhooks(batch, { db, config, env: fake.env, now: Date.now });
    expect(fake.calls).toEqual([]);
    expect(outcomes.get(deliveryId!)?.delaySeconds).toBeGreaterThan(0);
    expect(await deliveryRow(deliveryId!)).toMatchObject({
      status: "pending",
      attempts: 1,
      last_status: null,
      last_response: expect.stringContaining("an IP address"),
    });
  });

  it("acknowledges without posting a delivery whose endpoint is gone or disabled, or a malformed message", async () => {
    const gone = await endpoint();
    const [goneDelivery] = await idsOf(gone.id, await fannedOut([event()]));
    const disabled = await endpoint();
    const [disabledDelivery] = await idsOf(disabled.id, await fannedOut([event()]));
    await admin("DELETE", `/webhooks/${gone.id}`);
    await admin("PATCH", `/webhooks/${disabled.id}`, { disabled: true });
    const fake = receiver(() => new Response("ok"));
    const { batch, outcomes } = batchOf([goneDelivery!, disabledDelivery!, "whd_unknown"]);
    (batch.messages as unknown as { body: unknown }[]).push({
      ...(batch.messages[0] as object),
      body: { nonsense: true },
      ack: () => outcomes.set("malformed", { acked: true }),
    } as never);
    await deliverWebhooks(batch, { db, config, env: fake.env, now: Date.now });
    expect(fake.calls).toEqual([]);
    for (const id of [goneDelivery!, disabledDelivery!, "whd_unknown", "malformed"]) {
      expect(outcomes.get(id), id).toEqual({ acked: true });
    }
    expect(await deliveryRow(disabledDelivery!)).toMatchObject({ status: "pending", attempts: 0 });
  });

  it("goes out six at a time: a batch of slow receivers takes a sixth of its sum", async () => {
    const created = await endpoint([]);
    const ids = await idsOf(created.id, await fannedOut(Array.from({ length: 12 }, () => event())));
    expect(ids).toHaveLength(12);
    let inFlight = 0;
    let most = 0;
    const fake = receiver(async () => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 50));
      inFlight--;
      return new Response("ok");
    });
    const { batch, outcomes } = batchOf(ids);
    await deliverWebhooks(batch, { db, config, env: fake.env, now: Date.now });
    expect(most).toBe(6);
    expect([...outcomes.values()].every((outcome) => outcome.acked)).toBe(true);
  });

  it("a delivery out of retries is failed; a delivered one stays delivered; an event's dead letter is not ours", async () => {
    const created = await endpoint();
    const [dead, done] = await idsOf(created.id, await fannedOut([event(), event()]));
    await env.DB.prepare("UPDATE webhook_deliveries SET status = 'delivered' WHERE id = ?").bind(done).run();
    await markDeliveryDead(db, { deliveryId: dead }, Date.now());
    await markDeliveryDead(db, { deliveryId: done }, Date.now());
    await markDeliveryDead(db, event({ id: dead! }), Date.now());
    expect((await deliveryRow(dead!))!.status).toBe("failed");
    expect((await deliveryRow(done!))!.status).toBe("delivered");
  });
});
