// What the webhook tests share: the admin API, and the receivers of test/fakes/outbound.js (`https://webhooks.fake/…`)
// that the pool's OUTBOUND binding routes to. Both the request-time drain and the queues' consumers reach them there:
// the consumers run with the pool's own bindings, never with a test's `service({OUTBOUND})` override, so a receiver
// the whole real path can post to has to live in that fake Worker. Every post is verified here with the
// `standardwebhooks` library, as an app would.
import { env } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { expect } from "vitest";
import type { WireDelivery, WireEndpoint } from "../../src/webhooks";
import { NO_VERIFICATION, service } from "../helpers";

export const svc = service(NO_VERIFICATION);
export const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

export const admin = (method: string, path: string, json?: unknown) =>
  svc.request(method, `/admin${path}`, { headers: ADMIN, json });

/** A receiver of its own for one test: the URL to register and the path its posts are listed under. */
export function receiverUrl(tag: string): string {
  return `https://webhooks.fake/${tag}-${crypto.randomUUID().slice(0, 8)}`;
}

/**
 * How the receiver answers its next posts (test/fakes/outbound.js): statuses or "ok", then 200 for ever; with
 * `match`, only posts whose body holds it (a user's id) use the steps, whatever else reaches the receiver.
 */
export async function planAnswers(url: string, steps: (number | "ok")[], match?: string): Promise<void> {
  const query = new URLSearchParams({ path: new URL(url).pathname, ...(match ? { match } : {}) });
  const response = await env.OUTBOUND!.fetch(`https://webhooks.fake/__plan?${query}`, {
    method: "PUT",
    body: JSON.stringify(steps),
  });
  expect(response.status).toBe(204);
}

export interface ReceivedPost {
  body: string;
  headers: Record<string, string>;
  answer: number | string;
}

export async function received(url: string): Promise<ReceivedPost[]> {
  const path = new URL(url).pathname;
  const response = await env.OUTBOUND!.fetch(
    `https://webhooks.fake/__received?path=${encodeURIComponent(path)}`,
  );
  return (await response.json()) as ReceivedPost[];
}

export type Payload = {
  id: string;
  type: string;
  timestamp: string;
  subject: string;
  sequence: number;
  // biome-ignore lint/suspicious/noExplicitAny: the data is the wire's JSON, read by each test
  data: any;
};

/** Every post verified with the endpoint's secret; one that does not verify fails the test. */
export function verified(secret: string, posts: ReceivedPost[]): Payload[] {
  return posts.map((post) => new Webhook(secret).verify(post.body, post.headers) as Payload);
}

/** Polls `probe` until `done` says so, within `ms`; the last value either way. */
export async function eventually<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await probe();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    value = await probe();
  }
  return value;
}

export async function createEndpoint(
  body: Record<string, unknown>,
): Promise<WireEndpoint & { secret: string }> {
  const response = await admin("POST", "/webhooks", body);
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as WireEndpoint & { secret: string };
}

export async function deliveriesOf(endpointId: string, query = ""): Promise<WireDelivery[]> {
  const response = await admin("GET", `/webhooks/${endpointId}/deliveries?limit=500${query}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: WireDelivery[] }).items;
}

/**
 * The deliveries of `endpointId` whose event is about `userId`, newest first: events of other tests (a previous file's
 * still in the queues) may reach an endpoint subscribed to their type too.
 */
export async function deliveriesFor(endpointId: string, userId: string): Promise<WireDelivery[]> {
  const { results } = await env.DB.prepare(
    "SELECT id FROM webhook_deliveries WHERE endpoint_id = ? AND instr(payload, ?) > 0",
  )
    .bind(endpointId, userId)
    .all<{ id: string }>();
  const ids = new Set(results.map((row) => row.id));
  return (await deliveriesOf(endpointId)).filter((delivery) => ids.has(delivery.id));
}
