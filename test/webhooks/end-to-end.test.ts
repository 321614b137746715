// Webhooks end to end, through the real path (contract move-in §5.2): a request through the service's routes writes
// its change and its event (the outbox), the request's drain hands the event to the EVENTS queue, the queue's consumer
// (the pool runs wrangler.toml's consumers) fans it out to deliveries on WEBHOOK_DELIVERIES, whose consumer POSTs
// them to a receiver that verifies every signature with the `standardwebhooks` library (test/fakes/outbound.js, which
// the pool's OUTBOUND binding routes to; support.ts says why it lives there).

import { afterAll, describe, expect, it } from "vitest";
import { PASSWORD, signUp } from "../helpers";
import { STORAGE, uploaded, uploadForm } from "../storage/helpers";
import { userD1 } from "../support/shards";
import {
  admin,
  createEndpoint,
  deliveriesOf,
  eventually,
  type Payload,
  type ReceivedPost,
  received,
  receiverUrl,
  svc,
  verified,
} from "./support";

const made: string[] = [];
afterAll(async () => {
  for (const id of made) await admin("DELETE", `/webhooks/${id}`);
});

async function lastSequence(userId: string): Promise<number> {
  // A user's stream is numbered in its shard (src/db/shards.ts).
  const row = await userD1(userId)
    .prepare("SELECT last FROM event_sequences WHERE subject = ?")
    .bind(userId)
    .first<{ last: number }>();
  return row?.last ?? 0;
}

/** The posts of one user, verified, deduplicated on `webhook-id` (the same body every time, or the test fails). */
function deduplicated(secret: string, posts: ReceivedPost[], userId: string): Map<string, Payload> {
  const byId = new Map<string, Payload>();
  const bodies = new Map<string, string>();
  verified(secret, posts).forEach((payload, index) => {
    const post = posts[index]!;
    expect(post.headers["webhook-id"]).toBe(payload.id);
    if (payload.subject !== userId) return;
    const seen = bodies.get(payload.id);
    if (seen !== undefined) expect(post.body, "a redelivery carries the same body").toBe(seen);
    bodies.set(payload.id, post.body);
    byId.set(payload.id, payload);
  });
  return byId;
}

describe("webhooks through the real queues", () => {
  // Threats: a forged delivery (the receiver verifies the signature); a delivery lost or doubled between the change,
  // the outbox and the queues; events out of order for a user; secrets in an event's data.
  it("a user's life through the service's routes reaches the receiver signed, complete and in sequence", async () => {
    const everything = receiverUrl("e2e-all");
    const filesOnly = receiverUrl("e2e-files");
    const switchedOff = receiverUrl("e2e-off");
    const all = await createEndpoint({ url: everything });
    const files = await createEndpoint({ url: filesOnly, events: ["file.uploaded", "file.deleted"] });
    const off = await createEndpoint({ url: switchedOff });
    made.push(all.id, files.id, off.id);
    expect((await admin("PATCH", `/webhooks/${off.id}`, { disabled: true })).status).toBe(200);

    const session = await signUp(svc);
    const userId = session.user.id;
    expect((await admin("PATCH", `/users/${userId}`, { displayName: "Ada Lovelace" })).status).toBe(200);
    const changed = await svc.request("POST", "/user/password", {
      json: { newPassword: `${PASSWORD} again` },
      token: session.accessToken,
    });
    expect(changed.status).toBe(200);
    const [file] = await uploaded(
      uploadForm([{ bytes: "hello webhooks", name: "note.txt", type: "text/plain" }]),
      session.accessToken,
    );
    const removed = await svc.request("DELETE", `${STORAGE}/files/${file!.id}`, {
      token: session.accessToken,
    });
    expect(removed.status).toBe(204);
    expect((await svc.post("/signout", { refreshToken: session.refreshToken })).status).toBe(200);

    const n = await lastSequence(userId);
    expect(n).toBeGreaterThanOrEqual(7);
    const got = await eventually(
      async () => deduplicated(all.secret, await received(everything), userId),
      (byId) => byId.size >= n,
    );
    const payloads = [...got.values()].sort((a, b) => a.sequence - b.sequence);
    // Queues keep no order; the sequence does: 1..n, no gap, none twice.
    expect(payloads.map((payload) => payload.sequence)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    const types = payloads.map((payload) => payload.type);
    for (const type of [
      "user.created",
      "session.created",
      "user.updated",
      "password.changed",
      "file.uploaded",
      "file.deleted",
      "session.revoked",
    ]) {
      expect(types, type).toContain(type);
    }
    expect(types[0]).toBe("user.created");
    expect(types.at(-1)).toBe("session.revoked");

    const byType = (type: string) => payloads.find((payload) => payload.type === type)!;
    expect(byType("user.created")).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      type: "user.created",
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      subject: userId,
      sequence: 1,
      data: {
        user: expect.objectContaining({ id: userId, email: session.user.email, roles: ["user", "me"] }),
      },
    });
    expect(byType("user.updated").data.user.displayName).toBe("Ada Lovelace");
    expect(byType("session.created").data.session).toMatchObject({ userId, method: "email-password" });
    expect(byType("file.uploaded").data.file).toMatchObject({ id: file!.id, name: "note.txt", size: 14 });
    expect(byType("file.deleted").data.file).toEqual({
      id: file!.id,
      bucketId: "default",
      name: "note.txt",
      uploadedByUserId: userId,
    });
    const posts = (await received(everything)).filter((post) => got.has(post.headers["webhook-id"]!));
    for (const post of posts) {
      expect(post.headers["content-type"]).toBe("application/json");
      expect(Math.abs(Number(post.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(120);
      expect(post.body).not.toMatch(/password_hash|passwordHash|totp|refreshToken|ticket/i);
      expect(post.body).not.toContain(session.refreshToken);
    }

    // The files-only endpoint got this user's two file events and nothing else of theirs.
    const fileEvents = await eventually(
      async () => deduplicated(files.secret, await received(filesOnly), userId),
      (byId) => byId.size >= 2,
    );
    expect([...fileEvents.values()].map((payload) => payload.type).sort()).toEqual([
      "file.deleted",
      "file.uploaded",
    ]);
    // Each endpoint signs with its own secret: the other's does not verify.
    const firstFilePost = (await received(filesOnly)).slice(0, 1);
    expect(() => verified(all.secret, firstFilePost)).toThrow();
    expect(await received(switchedOff)).toEqual([]);

    // The admin API's account of the same: delivered, one attempt each, the receiver's answer kept.
    const deliveries = await eventually(
      () => deliveriesOf(all.id),
      (items) => items.filter((item) => got.has(item.eventId) && item.status === "delivered").length >= n,
    );
    const mine = deliveries.filter((item) => got.has(item.eventId));
    expect(mine).toHaveLength(n);
    for (const delivery of mine) {
      expect(delivery).toMatchObject({
        status: "delivered",
        attempts: 1,
        lastStatus: 200,
        lastResponse: "thanks",
      });
      expect(delivery.deliveredAt).not.toBeNull();
    }
    expect(await deliveriesOf(off.id)).toEqual([]);
  }, 40_000);
});
