// Receivers that fail, through the real queues (the pool runs wrangler.toml's consumers, with
// AUTH_EVENTS_RETRY_DELAY_SECONDS=0 from vitest.config.ts: retries at once; the growing delays are asserted where they
// are computed, test/events/consume.test.ts and test/webhooks/delivery.test.ts), and the dead-letter queue: a
// delivery out of retries is kept, listed and sent again. Exhausting 16 real retries would take hours, so the dead
// letters' batches are handed to the queue handler (src/runtime/consumers.ts) as the dead-letter queue would hand
// them. The threat named above each test is what it keeps out.
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { afterAll, describe, expect, it } from "vitest";
import type { StreamEvent } from "../../src/events/types";
import { handleQueueBatch } from "../../src/runtime/consumers";
import { signUp } from "../helpers";
import {
  admin,
  createEndpoint,
  deliveriesFor,
  eventually,
  planAnswers,
  received,
  receiverUrl,
  svc,
  verified,
} from "./support";

const made: string[] = [];
afterAll(async () => {
  for (const id of made) await admin("DELETE", `/webhooks/${id}`);
});

async function endpoint(body: Record<string, unknown>) {
  const created = await createEndpoint(body);
  made.push(created.id);
  return created;
}

interface WireDeadLetter {
  id: string;
  queue: string;
  summary: string;
  body: unknown;
  attempts: number;
  at: string;
}

async function deadLetters(): Promise<WireDeadLetter[]> {
  const response = await admin("GET", "/events/dead-letters?limit=500");
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: WireDeadLetter[] }).items;
}

/** The dead-letter queue handing `bodies` to the Worker's queue handler after their last retry. */
async function deadLetterBatch(bodies: unknown[]) {
  const messages = bodies.map((body) => ({
    id: `dl-${crypto.randomUUID()}`,
    timestamp: new Date(),
    attempts: 17,
    body,
  }));
  const batch = createMessageBatch("edge-auth-dead-letters", messages);
  const ctx = createExecutionContext();
  await handleQueueBatch(batch, env);
  const result = await getQueueResult(batch, ctx);
  expect(result.explicitAcks.sort()).toEqual(messages.map((message) => message.id).sort());
  return messages.map((message) => message.id);
}

describe("receivers that fail", () => {
  // Threat: a receiver's bad minute losing events, or a retry delivering one twice.
  it("answers 500, a redirect, 502, 503: every event still arrives, once after dedupe on webhook-id", async () => {
    const url = receiverUrl("flaky");
    const created = await endpoint({ url });
    const { user } = await signUp(svc);
    // Only this user's events, in turn: those delivered before the plan was set take its steps no less in order.
    await planAnswers(url, [500, 302, 502, 503], user.id);
    expect((await admin("PATCH", `/users/${user.id}`, { displayName: "Grace Hopper" })).status).toBe(200);
    const ofUser = async () => (await received(url)).filter((post) => post.body.includes(user.id));
    // user.created, session.created, user.updated: three events, four failed posts among them.
    const posts = await eventually(
      ofUser,
      (all) => all.filter((post) => post.answer === "ok").length >= 3,
      30_000,
    );
    expect(posts.filter((post) => post.answer !== "ok").map((post) => post.answer)).toEqual([
      500, 302, 502, 503,
    ]);
    const payloads = verified(created.secret, posts);
    const delivered = verified(
      created.secret,
      posts.filter((post) => post.answer === "ok"),
    ).map((payload) => payload.id);
    // Every event once among the successful posts; the failed posts were of the same events.
    expect(new Set(delivered).size).toBe(3);
    expect(delivered).toHaveLength(3);
    expect(new Set(payloads.map((payload) => payload.id))).toEqual(new Set(delivered));
    expect(payloads.map((payload) => payload.sequence).sort()).toEqual(expect.arrayContaining([1, 2, 3]));
    const deliveries = await eventually(
      () => deliveriesFor(created.id, user.id),
      (items) => items.filter((item) => item.status === "delivered").length >= 3,
    );
    // Seven posts for three deliveries: each failure was an attempt of its own.
    expect(deliveries.reduce((sum, item) => sum + item.attempts, 0)).toBe(7);
  }, 40_000);

  // Threat: a receiver down for a while (a deploy, an outage) missing what happened meanwhile.
  it("is down for a while: the delivery is retried until it is delivered", async () => {
    const url = receiverUrl("down");
    const created = await endpoint({ url, events: ["user.updated"] });
    const { user } = await signUp(svc);
    // What a proxy answers while the app behind it is down.
    await planAnswers(url, [502, 503, 502], user.id);
    expect((await admin("PATCH", `/users/${user.id}`, { displayName: "Katherine Johnson" })).status).toBe(
      200,
    );
    const ofUser = async () => (await received(url)).filter((post) => post.body.includes(user.id));
    const posts = await eventually(ofUser, (all) => all.some((post) => post.answer === "ok"), 30_000);
    expect(posts.map((post) => post.answer)).toEqual([502, 503, 502, "ok"]);
    // Each attempt signed afresh (its own timestamp), the same id and body every time.
    const payloads = verified(created.secret, posts);
    expect(new Set(payloads.map((payload) => payload.id)).size).toBe(1);
    expect(new Set(posts.map((post) => post.body)).size).toBe(1);
    const [delivery] = await eventually(
      () => deliveriesFor(created.id, user.id),
      (items) => items[0]?.status === "delivered",
    );
    expect(delivery).toMatchObject({ status: "delivered", attempts: 4, lastStatus: 200 });
    // Each retry asks the queue for the growing delay: test/webhooks/delivery.test.ts ("retries after the stream's
    // growing delay") checks the delay the consumer asks for at each attempt.
  }, 40_000);
});

describe("dead letters", () => {
  // Threat: a delivery that ran out of retries vanishing without a trace, or never sendable again.
  it("a delivery out of retries is failed, listed, and redelivered through the real queue", async () => {
    const url = receiverUrl("dead");
    const created = await endpoint({ url, events: ["user.updated"] });
    const { user } = await signUp(svc);
    // Every attempt fails: with the pool's retries at once (AUTH_EVENTS_RETRY_DELAY_SECONDS=0) the real queue spends
    // its 16 retries in seconds, and its dead-letter queue marks the delivery failed.
    await planAnswers(url, Array(40).fill(500), user.id);
    expect((await admin("PATCH", `/users/${user.id}`, { displayName: "Mary Jackson" })).status).toBe(200);
    const [pending] = await eventually(
      () => deliveriesFor(created.id, user.id),
      (items) => items[0]?.status === "failed",
    );
    expect(pending!.attempts).toBeGreaterThan(1);
    // The dead-letter queue hands the message over (again, here: a letter of the test's own, to read back).
    const [letterId] = await deadLetterBatch([{ deliveryId: pending!.id }]);
    const [failed] = await eventually(
      () => deliveriesFor(created.id, user.id),
      (items) => items[0]?.status === "failed",
    );
    expect(failed).toMatchObject({ id: pending!.id, status: "failed" });
    const letter = (await deadLetters()).find((item) => item.id === letterId);
    expect(letter).toEqual({
      id: letterId,
      queue: "deliveries",
      summary: `webhook delivery ${pending!.id}`,
      body: { deliveryId: pending!.id },
      attempts: 17,
      at: expect.any(String),
    });
    // A dead letter delivered twice by the queue is kept once.
    await handleQueueBatch(
      createMessageBatch("edge-auth-dead-letters", [
        { id: letterId!, timestamp: new Date(), attempts: 17, body: { deliveryId: pending!.id } },
      ]),
      env,
    );
    expect((await deadLetters()).filter((item) => item.id === letterId)).toHaveLength(1);

    // The receiver is back.
    await planAnswers(url, [], user.id);
    const response = await admin("POST", "/events/dead-letters/redeliver", {
      ids: [letterId, "no-such-letter"],
    });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ redelivered: 1 });
    expect((await deadLetters()).some((item) => item.id === letterId)).toBe(false);
    const [delivered] = await eventually(
      () => deliveriesFor(created.id, user.id),
      (items) => items[0]?.status === "delivered",
    );
    expect(delivered).toMatchObject({ id: pending!.id, status: "delivered", lastStatus: 200 });
    const posts = (await received(url)).filter((post) => post.body.includes(user.id));
    expect(verified(created.secret, posts).every((payload) => payload.id === pending!.eventId)).toBe(true);
  }, 40_000);

  it("an event out of retries is listed and, sent again, goes through the fan-out to the receivers", async () => {
    const url = receiverUrl("dead-event");
    const created = await endpoint({ url, events: ["user.updated"] });
    const event: StreamEvent = {
      id: `evt_${crypto.randomUUID().replace(/-/g, "")}`,
      type: "user.updated",
      timestamp: new Date().toISOString(),
      subject: `dead-letter-${crypto.randomUUID()}`,
      sequence: 4,
      data: { user: { id: "someone", displayName: "Dorothy Vaughan" } },
    };
    const [letterId] = await deadLetterBatch([event]);
    const letter = (await deadLetters()).find((item) => item.id === letterId);
    expect(letter).toMatchObject({
      queue: "events",
      summary: expect.stringContaining(`user.updated ${event.id}`),
    });
    const response = await admin("POST", "/events/dead-letters/redeliver", { ids: [letterId] });
    expect(await response.json()).toEqual({ redelivered: 1 });
    const posts = await eventually(
      async () => (await received(url)).filter((post) => post.body.includes(event.id)),
      (all) => all.length > 0,
    );
    expect(verified(created.secret, posts)).toEqual([
      {
        id: event.id,
        type: event.type,
        timestamp: event.timestamp,
        subject: event.subject,
        sequence: 4,
        data: event.data,
      },
    ]);
  }, 30_000);

  // Threat: an operator sending a delivery again by hand (the receiver lost it) and getting a new, undeduplicable id.
  it("redelivers one delivery by hand: pending again, the same webhook-id", async () => {
    const url = receiverUrl("by-hand");
    const created = await endpoint({ url, events: ["user.updated"] });
    const { user } = await signUp(svc);
    expect((await admin("PATCH", `/users/${user.id}`, { displayName: "Annie Easley" })).status).toBe(200);
    const [first] = await eventually(
      () => deliveriesFor(created.id, user.id),
      (items) => items[0]?.status === "delivered",
    );
    const response = await admin("POST", `/webhooks/${created.id}/deliveries/${first!.id}/redeliver`);
    expect(response.status).toBe(202);
    expect(await response.json()).toMatchObject({ id: first!.id, status: "pending", deliveredAt: null });
    const posts = await eventually(
      async () => (await received(url)).filter((post) => post.body.includes(user.id)),
      (all) => all.length >= 2,
    );
    const payloads = verified(created.secret, posts);
    expect(payloads.map((payload) => payload.id)).toEqual([first!.eventId, first!.eventId]);
    const [again] = await eventually(
      () => deliveriesFor(created.id, user.id),
      (items) => items[0]?.status === "delivered",
    );
    expect(again).toMatchObject({ status: "delivered", attempts: 2 });
  }, 30_000);
});
