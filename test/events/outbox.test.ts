// The event stream's outbox (contract move-in §5, src/events/, migration 0020): every change to a user, a session or
// a file writes its event in the same statement, whichever code path made it, and the drain after the request hands
// the events to the EVENTS queue. Here the queue is a recording stand-in passed as the EVENTS binding, so each test
// sees exactly what the service would have handed to Cloudflare Queues, in the order it did.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDb, type Db } from "../../src/db/client";
import { CLAIM_MS, drainOutbox } from "../../src/events/outbox";
import type { StreamEvent } from "../../src/events/types";
import worker from "../../src/index";
import { signUpInEachShard } from "../db/shard-users";
import { NO_VERIFICATION, PASSWORD, service, signUp, uniqueEmail } from "../helpers";
import { admin, importUsers, nhostUser } from "../move-in/support";
import { STORAGE, uploadForm } from "../storage/helpers";
import { allInShards, testShards, userD1, userDb, userIdByEmail } from "../support/shards";

const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

/** A stand-in for the EVENTS queue binding: records every event sent, or fails while `down` is set. */
function recordingQueue() {
  const sent: StreamEvent[] = [];
  const queue = {
    down: false,
    async send(body: StreamEvent) {
      if (queue.down) throw new Error("queue unavailable");
      sent.push(body);
    },
    async sendBatch(messages: Iterable<{ body: StreamEvent }>) {
      if (queue.down) throw new Error("queue unavailable");
      for (const message of messages) sent.push(message.body);
    },
  };
  return {
    queue,
    sent,
    of: (subject: string) => sent.filter((event) => event.subject === subject),
  };
}

/**
 * Waiting rows of the outbox for a subject (not yet handed to the queue), in every shard: a subject's events are
 * written in one, its user's (src/db/shards.ts).
 */
async function waiting(subject: string): Promise<{ type: string; claimed_until: number | null }[]> {
  return allInShards<{ type: string; claimed_until: number | null }>(
    "SELECT type, claimed_until FROM event_outbox WHERE subject = ? ORDER BY position",
    subject,
  );
}

/** Every shard's outbox drained by `drain`, at once. */
const inEveryShard = (drain: (db: Db) => Promise<unknown>) => Promise.all(testShards().all.map(drain));

describe("the event stream's outbox", () => {
  it("writes one event per change of a user's life, in order, with sequences 1, 2, 3, … and no secrets", async () => {
    const events = recordingQueue();
    const svc = service({ ...NO_VERIFICATION, EVENTS: events.queue });
    const email = uniqueEmail("stream");
    const session = await signUp(svc, email);
    const userId = session.user.id;
    // Sign in again (a second session), change the profile through the admin API, change the password, sign out.
    const signIn = await svc.post("/signin/email-password", { email, password: PASSWORD });
    expect(signIn.status).toBe(200);
    const patched = await svc.request("PATCH", `/admin/users/${userId}`, {
      json: { displayName: "Stream Person", metadata: { plan: "pro" } },
      headers: ADMIN,
    });
    expect(patched.status).toBe(200);
    const changed = await svc.post(
      "/user/password",
      { newPassword: "another horse battery" },
      session.accessToken,
    );
    expect(changed.status).toBe(200);
    const fresh = (await (
      await svc.post("/signin/email-password", { email, password: "another horse battery" })
    ).json()) as { session: { refreshToken: string } };
    const signedOut = await svc.post("/signout", { refreshToken: fresh.session.refreshToken });
    expect(signedOut.status).toBe(200);
    const deleted = await svc.request("DELETE", `/admin/users/${userId}`, { headers: ADMIN });
    expect(deleted.status).toBe(204);

    const stream = events.of(userId);
    const types = stream.map((event) => event.type);
    expect(types[0]).toBe("user.created");
    expect(types[1]).toBe("session.created");
    expect(types).toContain("user.updated");
    expect(types).toContain("password.changed");
    expect(types).toContain("session.revoked");
    expect(types.at(-1)).toBe("user.deleted");
    // In order, without gaps: a consumer can restore the order a queue loses.
    expect(stream.map((event) => event.sequence)).toEqual(stream.map((_, index) => index + 1));
    expect(new Set(stream.map((event) => event.id)).size).toBe(stream.length);
    for (const event of stream) expect(event.id).toMatch(/^evt_[0-9a-f]{32}$/);

    const created = stream[0]!.data.user as Record<string, unknown>;
    expect(created).toMatchObject({ id: userId, email, emailVerified: false, roles: ["user", "me"] });
    const updated = stream.find((event) => event.type === "user.updated")!.data.user as Record<
      string,
      unknown
    >;
    expect(updated).toMatchObject({ displayName: "Stream Person", metadata: { plan: "pro" } });
    const firstSession = stream[1]!.data.session as Record<string, unknown>;
    expect(firstSession).toMatchObject({ userId, method: "email-password" });
    // Secrets never leave: not the hash, not the TOTP secret, not a token.
    const everything = JSON.stringify(stream);
    expect(everything).not.toMatch(/argon2|password_?hash|totp_?secret|refreshToken/i);
    // The drain took everything it handed over: nothing of this user waits.
    expect(await waiting(userId)).toEqual([]);
  });

  it("says when an address is proven, and a rehash at sign-in is not a change of password", async () => {
    const events = recordingQueue();
    const svc = service({ EVENTS: events.queue, AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "true" });
    const email = uniqueEmail("verify");
    const signUpResponse = await svc.post("/signup/email-password", { email, password: PASSWORD });
    expect(signUpResponse.status).toBe(200);
    const user = { id: (await userIdByEmail(email))! };
    const shard = userD1(user.id);
    await shard.prepare("UPDATE users SET email_verified = 1 WHERE id = ?").bind(user.id).run();
    // The same password hashed again (what a sign-in does to an old hash) changes the hash, not the password.
    await shard.prepare("UPDATE users SET password_hash = 'rehashed' WHERE id = ?").bind(user.id).run();
    // Un-verified again (an admin's PATCH): an update, so the mirror does not keep saying "verified".
    await shard.prepare("UPDATE users SET email_verified = 0 WHERE id = ?").bind(user.id).run();
    await drainOutbox({ db: createDb(shard), queue: events.queue as unknown as Queue, now: Date.now });
    expect(events.of(user!.id).map((event) => event.type)).toEqual([
      "user.created",
      "email.verified",
      "user.updated",
    ]);
    expect(events.of(user!.id)[2]!.data.user).toMatchObject({ emailVerified: false });
  });

  it("writes file events for an upload and a delete, in the uploader's stream", async () => {
    const events = recordingQueue();
    const svc = service({ ...NO_VERIFICATION, EVENTS: events.queue });
    const session = await signUp(svc);
    const form = uploadForm([{ bytes: "hello events", name: "hello.txt", type: "text/plain" }]);
    const uploaded = await svc.request("POST", `${STORAGE}/files`, {
      body: form,
      token: session.accessToken,
    });
    expect(uploaded.status).toBe(201);
    const [file] = ((await uploaded.json()) as { processedFiles: { id: string }[] }).processedFiles;
    if (!file) throw new Error("no file uploaded");
    const removed = await svc.request("DELETE", `${STORAGE}/files/${file.id}`, {
      token: session.accessToken,
    });
    expect(removed.status).toBe(204);
    const fileEvents = events.of(session.user.id).filter((event) => event.type.startsWith("file."));
    expect(fileEvents.map((event) => event.type)).toEqual(["file.uploaded", "file.deleted"]);
    expect(fileEvents[0]!.data.file).toMatchObject({
      id: file.id,
      name: "hello.txt",
      size: 12,
      bucketId: "default",
      uploadedByUserId: session.user.id,
      isUploaded: true,
    });
  });

  // Threat: a change committed without its event (or an event for a change that never happened) leaves the app's
  // mirror and webhooks out of step for good. The event is part of the statement: a batch that fails writes neither.
  it("writes no event for a change that did not happen", async () => {
    const db = createDb(env.DB);
    const id = crypto.randomUUID();
    const insertUser = env.DB.prepare(
      "INSERT INTO users (id, created_at, updated_at, locale, email, default_role, roles) VALUES (?, 1, 1, 'en', ?, 'user', '[\"user\"]')",
    ).bind(id, uniqueEmail("atomic"));
    const failing = env.DB.prepare("INSERT INTO users (id) VALUES (NULL)");
    await expect(env.DB.batch([insertUser, failing])).rejects.toThrow();
    expect(await db.$client.prepare("SELECT count(*) AS n FROM users WHERE id = ?").bind(id).first("n")).toBe(
      0,
    );
    expect(await waiting(id)).toEqual([]);
  });

  // Fault: the queue is down when the request ends. The request still succeeds (its change is committed with its
  // event); the event waits, claimed for CLAIM_MS, and a later drain (the minute's cron) hands it over once.
  it("keeps events while the queue is down and hands them over once it is back", async () => {
    const events = recordingQueue();
    events.queue.down = true;
    const svc = service({ ...NO_VERIFICATION, EVENTS: events.queue });
    const session = await signUp(svc);
    expect(events.sent).toEqual([]);
    expect((await waiting(session.user.id)).map((row) => row.type)).toEqual([
      "user.created",
      "session.created",
    ]);
    events.queue.down = false;
    const db = userDb(session.user.id);
    const queue = events.queue as unknown as Queue;
    // Still claimed by the failed drain: a drain right now leaves them (no double send while one may be in flight).
    await drainOutbox({ db, queue, now: Date.now });
    expect(events.of(session.user.id)).toEqual([]);
    await drainOutbox({ db, queue, now: () => Date.now() + CLAIM_MS + 1 });
    expect(events.of(session.user.id).map((event) => event.type)).toEqual([
      "user.created",
      "session.created",
    ]);
    expect(await waiting(session.user.id)).toEqual([]);
  });

  // Race: a crowd of requests ends at once and every one drains. Claims are one conditional UPDATE … RETURNING, so
  // each event is handed over by exactly one drain.
  it("hands each event over once when many drains run at the same time", async () => {
    const quiet = recordingQueue();
    quiet.queue.down = true;
    const svc = service({ ...NO_VERIFICATION, EVENTS: quiet.queue });
    const sessions = await Promise.all(Array.from({ length: 20 }, () => signUp(svc)));
    const events = recordingQueue();
    const later = () => Date.now() + CLAIM_MS + 1;
    await Promise.all(
      Array.from({ length: 25 }, () =>
        inEveryShard((db) => drainOutbox({ db, queue: events.queue as unknown as Queue, now: later })),
      ),
    );
    for (const session of sessions) {
      expect(events.of(session.user.id).map((event) => event.type)).toEqual([
        "user.created",
        "session.created",
      ]);
    }
    const ids = events.sent.map((event) => event.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  // Fault: a request whose drain never ran (the isolate went away after the answer). The minute's cron hands over
  // what waits, so an event is late by at most about a minute plus the claim, never lost.
  it("the minute's cron hands over what no request did", async () => {
    const stuck = recordingQueue();
    stuck.queue.down = true;
    const session = await signUp(service({ ...NO_VERIFICATION, EVENTS: stuck.queue }));
    await userD1(session.user.id)
      .prepare("UPDATE event_outbox SET claimed_until = NULL WHERE subject = ?")
      .bind(session.user.id)
      .run();
    const events = recordingQueue();
    const ctx = createExecutionContext();
    const controller = { cron: "* * * * *", scheduledTime: Date.now(), noRetry() {} } as ScheduledController;
    await worker.scheduled!(controller, { ...env, EVENTS: events.queue } as never, ctx);
    await waitOnExecutionContext(ctx);
    expect(events.of(session.user.id).map((event) => event.type)).toEqual([
      "user.created",
      "session.created",
    ]);
  });

  // Fault: with several shards, each shard's triggers write their own outbox. Threat: the cron draining only the
  // home database, so the events of users in other shards wait for ever when their request's drain did not run.
  it("the minute's cron hands over every shard's events, each user's in order", async () => {
    const stuck = recordingQueue();
    stuck.queue.down = true;
    const quiet = service({ ...NO_VERIFICATION, EVENTS: stuck.queue });
    const sessions = await signUpInEachShard(quiet);
    for (const session of sessions) {
      const uploaded = await quiet.request("POST", `${STORAGE}/files`, {
        body: uploadForm([{ bytes: "stuck", type: "text/plain" }]),
        token: session.accessToken,
      });
      const [file] = ((await uploaded.json()) as { processedFiles: { id: string }[] }).processedFiles;
      expect(
        (await quiet.request("DELETE", `${STORAGE}/files/${file!.id}`, { token: session.accessToken }))
          .status,
      ).toBe(204);
    }
    for (const session of sessions) {
      await userD1(session.user.id)
        .prepare("UPDATE event_outbox SET claimed_until = NULL WHERE subject = ?")
        .bind(session.user.id)
        .run();
    }
    const events = recordingQueue();
    const ctx = createExecutionContext();
    const controller = { cron: "* * * * *", scheduledTime: Date.now(), noRetry() {} } as ScheduledController;
    await worker.scheduled!(controller, { ...env, EVENTS: events.queue } as never, ctx);
    await waitOnExecutionContext(ctx);
    for (const session of sessions) {
      const stream = events.of(session.user.id);
      expect(stream.map((event) => event.type)).toEqual([
        "user.created",
        "session.created",
        "file.uploaded",
        "file.deleted",
      ]);
      expect(stream.map((event) => event.sequence)).toEqual([1, 2, 3, 4]);
      expect(await waiting(session.user.id)).toEqual([]);
    }
  });

  // Threat: a request that wrote in a user's shard other than the home database leaving that shard's events to the
  // cron (a minute late) because the drain after the answer looked at the home database only.
  it("a request's drain hands over the events it wrote in its user's shard", async () => {
    const events = recordingQueue();
    const svc = service({ ...NO_VERIFICATION, EVENTS: events.queue });
    for (const session of await signUpInEachShard(svc)) {
      const uploaded = await svc.request("POST", `${STORAGE}/files`, {
        body: uploadForm([{ bytes: "at once", type: "text/plain" }]),
        token: session.accessToken,
      });
      expect(uploaded.status).toBe(201);
      expect(events.of(session.user.id).map((event) => event.type)).toEqual([
        "user.created",
        "session.created",
        "file.uploaded",
      ]);
    }
  });

  // Contract move-in §2: an import of a hundred thousand users is not a hundred thousand webhook calls. Its batches
  // mute their own subjects (event_mutes, in the same transaction); the run ends with one import.completed.
  it("an import writes no per-user events, then one import.completed", async () => {
    const events = recordingQueue();
    const svc = service({ EVENTS: events.queue });
    const moved = await nhostUser();
    const { results } = await importUsers(svc, [moved.bundle]);
    expect(results[0]!.outcome).toBe("imported");
    // Removed again by a delta run: no user.deleted either.
    const removed = await svc.request("POST", "/admin/import/nhost/removals", {
      json: { kind: "user", ids: [moved.id], dryRun: false },
      headers: admin(),
    });
    expect(removed.status).toBe(200);
    const completed = await svc.request("POST", "/admin/import/nhost/completed", {
      json: { report: { users: { imported: 1 } } },
      headers: admin(),
    });
    expect(completed.status).toBe(204);
    expect(events.of(moved.id)).toEqual([]);
    expect(await waiting(moved.id)).toEqual([]);
    const done = events.of("import").at(-1)!;
    expect(done).toMatchObject({ type: "import.completed", data: { report: { users: { imported: 1 } } } });
    // Nothing stays muted: the same subject's next change writes its event.
    const muted = await allInShards<{ n: number }>("SELECT count(*) AS n FROM event_mutes");
    expect(muted.map(({ n }) => n)).toEqual(muted.map(() => 0));
  });
});
