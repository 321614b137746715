// The audit leaves the building (contract operators.md §4): every audit event, with its actor, shipped as
// OpenTelemetry logs over OTLP/HTTP JSON to a real receiver on loopback (test/fakes/otlp-receiver.ts), through the
// event outbox and the EVENTS queue's handler (src/runtime/consumers.ts) with its retries and dead letters. The queue
// is a recording stand-in (as in test/events/outbox.test.ts), and its batches are handed to the Worker's queue handler
// as Cloudflare Queues would, with the export's settings in the handler's env: the pool's own consumer runs without
// them. The threat each test keeps out is named above it.
import {
  createExecutionContext,
  createMessageBatch,
  env,
  getQueueResult,
  waitOnExecutionContext,
} from "cloudflare:test";
import { Hono } from "hono";
import { describe, expect, inject, it } from "vitest";
import { requireAdminSecret } from "../../src/admin";
import { drainOutbox } from "../../src/events/outbox";
import type { StreamEvent } from "../../src/events/types";
import type { AppEnv } from "../../src/http/app-env";
import { requireAuth } from "../../src/http/auth";
import { requestContext } from "../../src/http/context";
import { getConfig } from "../../src/runtime/config";
import { handleQueueBatch } from "../../src/runtime/consumers";
import { createServices } from "../../src/runtime/services";
import { signAccessToken } from "../../src/signing-keys/jwt";
import type { ReceivedLog } from "../fakes/otlp-receiver";
import { decodeJwt, NO_VERIFICATION, service, signUp, uniqueAddress } from "../helpers";
import { testShards } from "../support/shards";

const receiver = inject("otlpReceiver");
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const EXPORT = {
  AUTH_AUDIT_OTLP_URL: receiver.url,
  // As OTEL_EXPORTER_OTLP_HEADERS: percent-encoded values, comma-separated pairs.
  AUTH_AUDIT_OTLP_HEADERS: "Authorization=Bearer%20otlp-test-token, x-scope-orgid=tenant-1",
  AUTH_OUTBOUND_ALLOW_LOCAL: "true",
};

/** The EVENTS binding as a recorder: what the service handed to the queue, or a failure while `down`. */
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
  return { queue, sent };
}

const events = recordingQueue();
const svc = service({ ...NO_VERIFICATION, ...EXPORT, EVENTS: events.queue });
/** The queue handler's env: the export set up, outbound fetches to the real loopback receiver. */
const handlerEnv = { ...env, ...EXPORT, EVENTS: events.queue, OUTBOUND: undefined } as unknown as typeof env;

const mode = (wanted: "up" | "down" | "reject") =>
  fetch(`${receiver.control}/__mode`, { method: "POST", body: JSON.stringify({ mode: wanted }) });
/** What the receiver took about a user: their events, and the failed sign-ins that name them by address. */
const receivedOf = async (userId: string, email = "\0") =>
  ((await (await fetch(`${receiver.control}/__received`)).json()) as ReceivedLog[]).filter(
    (log) =>
      log.attributes["user.id"] === userId ||
      (JSON.parse(log.attributes["audit.detail"] ?? "{}") as { email?: string }).email === email,
  );

/** The audit events about a user the service handed to the queue (every shard's outbox drained first). */
async function auditMessagesOf(userId: string, email = "\0"): Promise<StreamEvent[]> {
  await Promise.all(
    testShards().all.map((db) => drainOutbox({ db, queue: events.queue as never, now: Date.now })),
  );
  return events.sent.filter((event) => {
    const audit = event.data.audit as { userId?: string; detail: { email?: string } } | undefined;
    return event.type === "audit.recorded" && (audit?.userId === userId || audit?.detail.email === email);
  });
}

/** The queue delivering `bodies` to the Worker (attempt `attempts`): what it acknowledged and what it retried. */
async function deliver(bodies: StreamEvent[], attempts = 1) {
  const batch = createMessageBatch(
    "edge-auth-events",
    bodies.map((body) => ({ id: `msg-${body.id}-${attempts}`, timestamp: new Date(), attempts, body })),
  );
  const ctx = createExecutionContext();
  await handleQueueBatch(batch, handlerEnv);
  const result = await getQueueResult(batch, ctx);
  return { acked: result.explicitAcks.length, retried: result.retryMessages.length };
}

describe("the audit's OTLP export (contract operators.md §4)", () => {
  // Threat: a collector that is down for a while (a restart, a network split) losing the events of that while, or
  // an event reaching the SIEM without saying who acted.
  it("ships every event with its actor, subject, address, agent, outcome and reason; a collector down loses nothing", async () => {
    const address = uniqueAddress();
    const session = await signUp(svc);
    const userId = session.user.id;
    const wrong = await svc.request("POST", "/signin/email-password", {
      json: { email: session.user.email, password: "not the password" },
      headers: { "cf-connecting-ip": address, "user-agent": "audit-test/1.0" },
    });
    expect(wrong.status).toBe(401);
    const patched = await svc.request("PATCH", `/admin/users/${userId}`, {
      json: { displayName: "Exported" },
      headers: ADMIN,
    });
    expect(patched.status).toBe(200);

    await mode("down");
    const waiting = await auditMessagesOf(userId, session.user.email!);
    expect(waiting.map((event) => (event.data.audit as { type: string }).type).sort()).toEqual(
      ["admin.user.update", "signin.failure", "signup"].sort(),
    );
    // Down: every event is retried (with the stream's backoff), none acknowledged, none dropped.
    expect(await deliver(waiting, 1)).toEqual({ acked: 0, retried: waiting.length });
    expect(await receivedOf(userId, session.user.email!)).toEqual([]);

    await mode("up");
    expect(await deliver(waiting, 2)).toEqual({ acked: waiting.length, retried: 0 });
    const logs = await receivedOf(userId, session.user.email!);
    const byType = Object.fromEntries(logs.map((log) => [log.attributes["event.name"], log]));
    expect(Object.keys(byType).sort()).toEqual(["admin.user.update", "signin.failure", "signup"]);
    expect(byType["signin.failure"]!.attributes).toMatchObject({
      "audit.actor.type": "user",
      "audit.outcome": "failure",
      "audit.reason": "invalid-email-password",
      "client.address": address,
      "user_agent.original": "audit-test/1.0",
    });
    expect(byType["signin.failure"]!.severityNumber).toBe(13);
    expect(byType["admin.user.update"]!.attributes).toMatchObject({
      "audit.actor.type": "admin",
      "audit.outcome": "success",
    });
    expect(byType.signup!.severityNumber).toBe(9);
    for (const log of logs) {
      expect(log.headers.authorization).toBe("Bearer otlp-test-token");
      expect(log.headers["x-scope-orgid"]).toBe("tenant-1");
      expect(log.resource["service.name"]).toBe("edge-auth");
      expect(log.scope).toBe("edge-auth.audit");
      expect(log.attributes["audit.id"]).toMatch(/^\d{14}-/);
      expect(Number(BigInt(log.timeUnixNano) / 1_000_000n)).toBeGreaterThan(Date.now() - 60_000);
    }
  });

  // Threat: a collector that refuses forever (a revoked token, a wrong path) making the queue retry in a loop, or
  // the refused events vanishing without anyone being told.
  it("a collector answering 4xx: dead letters at once, an alert in the console, shipped once sent again", async () => {
    const session = await signUp(svc);
    const userId = session.user.id;
    await mode("reject");
    const waiting = await auditMessagesOf(userId);
    expect(waiting).toHaveLength(1);
    // Acknowledged, not retried: a 403 will not change by asking again; the events are kept as dead letters.
    expect(await deliver(waiting)).toEqual({ acked: 1, retried: 0 });
    const letters = (await (
      await svc.request("GET", "/admin/events/dead-letters?limit=500", { headers: ADMIN })
    ).json()) as {
      items: { id: string; queue: string; summary: string }[];
    };
    const mine = letters.items.filter((letter) => letter.id === `audit-${waiting[0]!.id}`);
    expect(mine).toEqual([
      expect.objectContaining({ queue: "events", summary: expect.stringMatching(/^audit\.recorded /) }),
    ]);

    // The console's audit page says so, and links to where they are sent again.
    const login = await svc.request("POST", "/admin/console/login", {
      body: new URLSearchParams({ secret: String(env.AUTH_ADMIN_SECRET) }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://localhost:8787" },
    });
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const page = await (await svc.request("GET", "/admin/console/audit", { headers: { cookie } })).text();
    expect(page).toMatch(/role="alert">\d+ audit events? (was|were) not shipped/);
    expect(page).toContain("/admin/console/dead-letters");

    await mode("up");
    const again = await svc.request("POST", "/admin/events/dead-letters/redeliver", {
      json: { ids: [mine[0]!.id] },
      headers: ADMIN,
    });
    expect(again.status).toBe(202);
    const resent = events.sent.filter((event) => event.id === waiting[0]!.id);
    expect(resent.length).toBeGreaterThanOrEqual(2);
    expect(await deliver([resent.at(-1)!], 1)).toEqual({ acked: 1, retried: 0 });
    expect((await receivedOf(userId)).map((log) => log.attributes["event.name"])).toEqual(["signup"]);
  });

  // Threat: the queue failing (Cloudflare Queues unavailable) losing audit events on their way out.
  it("the queue failing: the events wait in the outbox, and the next drain hands them over", async () => {
    events.queue.down = true;
    const session = await signUp(svc);
    expect(await auditMessagesOf(session.user.id)).toEqual([]);
    events.queue.down = false;
    // Past the claim of the drains that failed (60 s), as the minute's cron would find them.
    const later = Date.now() + 61_000;
    await Promise.all(
      testShards().all.map((db) => drainOutbox({ db, queue: events.queue as never, now: () => later })),
    );
    const handed = events.sent.filter(
      (event) => (event.data.audit as { userId?: string } | undefined)?.userId === session.user.id,
    );
    expect(handed.map((event) => (event.data.audit as { type: string }).type)).toEqual(["signup"]);
  });

  // Threat: an impersonating support engineer's actions passing as the user's own in the SIEM.
  it("a request whose access token carries act is the impersonator's, named by act.sub; without it, the user's", async () => {
    const session = await signUp(svc);
    const { payload } = decodeJwt(session.accessToken);
    const config = getConfig(svc.env);
    const impersonating = await signAccessToken(
      config,
      session.user.id,
      payload["https://hasura.io/jwt/claims"] as Record<string, string>,
      Date.now(),
      payload.sid as string,
      { act: { sub: "support@example.com" } } as unknown as Record<string, string>,
    );
    // The service's own request context and token check, over a route that records an event as any flow does: an
    // impersonation may write nothing through the API's own routes (operators.md §1), so a read stands in for them.
    const probe = new Hono<AppEnv>()
      .use(requestContext(config, createServices))
      .get("/probe", requireAuth, (c) => {
        c.var.deps.audit({ type: "elevation", userId: c.var.auth!.sub, detail: { probe: true } });
        return c.body(null, 204);
      })
      // An admin action that takes the operator's name (an impersonation's `actor`): the admin, so named.
      .post("/admin-probe", requireAdminSecret, (c) => {
        c.var.deps.audit({
          type: "admin.impersonation.start",
          userId: session.user.id,
          detail: { actor: "ana@support" },
        });
        return c.body(null, 204);
      });
    for (const token of [impersonating, session.accessToken]) {
      const ctx = createExecutionContext();
      const answer = await probe.fetch(
        new Request("http://localhost/probe", { headers: { authorization: `Bearer ${token}` } }),
        svc.env,
        ctx,
      );
      await waitOnExecutionContext(ctx);
      expect(answer.status).toBe(204);
    }
    const ctx = createExecutionContext();
    const started = await probe.fetch(
      new Request("http://localhost/admin-probe", { method: "POST", headers: ADMIN }),
      svc.env,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(started.status).toBe(204);
    const page = (await (
      await svc.request("GET", `/admin/audit?userId=${session.user.id}&limit=3`, { headers: ADMIN })
    ).json()) as { items: { type: string; actor: { type: string; name?: string } }[] };
    expect(page.items.map((event) => [event.type, event.actor])).toEqual([
      ["admin.impersonation.start", { type: "admin", name: "ana@support" }],
      ["elevation", { type: "user" }],
      ["elevation", { type: "impersonator", name: "support@example.com" }],
    ]);
  });

  // Threat: the export posting audit events (and the collector's token) to an address inside the network (SSRF), or
  // a malformed credentials variable echoed into a log.
  it("refuses at start-up a URL the outbound policy refuses, and headers that are not key=value, without echoing them", () => {
    const start = (vars: Record<string, string>) => () => getConfig({ ...env, ...vars });
    expect(start({ AUTH_AUDIT_OTLP_URL: "https://10.0.0.1/v1/logs" })).toThrow(
      /AUTH_AUDIT_OTLP_URL: an IP address/,
    );
    expect(start({ AUTH_AUDIT_OTLP_URL: "http://collector.example.com/v1/logs" })).toThrow(
      /AUTH_AUDIT_OTLP_URL: not https/,
    );
    expect(start({ AUTH_AUDIT_OTLP_URL: "https://collector.internal/v1/logs" })).toThrow(/a local host name/);
    // Loopback only while the server is local and AUTH_OUTBOUND_ALLOW_LOCAL=true (the pool's server is local).
    expect(start({ AUTH_AUDIT_OTLP_URL: receiver.url })).toThrow(/AUTH_AUDIT_OTLP_URL: not https/);
    expect(start({ AUTH_AUDIT_OTLP_HEADERS: "Authorization=Bearer%20x" })).toThrow(
      /without AUTH_AUDIT_OTLP_URL/,
    );
    for (const headers of [
      "Authorization: Bearer s3cret-value",
      "=s3cret-value",
      "x-a=%E0%A4%A",
      "Host=s3cret-value",
    ]) {
      const refused = start({
        AUTH_AUDIT_OTLP_URL: "https://collector.example.com/v1/logs",
        AUTH_AUDIT_OTLP_HEADERS: headers,
      });
      expect(refused, headers).toThrow(/AUTH_AUDIT_OTLP_HEADERS: pair 1 is not key=value/);
      expect(() => refused()).not.toThrow(/s3cret/);
    }
    expect(
      getConfig({
        ...env,
        AUTH_AUDIT_OTLP_URL: "https://collector.example.com/v1/logs",
        AUTH_AUDIT_OTLP_HEADERS: "Authorization=Basic%20YTpi%3D, X-Tenant = acme ,",
      }).auditExport.otlp,
    ).toEqual({
      url: "https://collector.example.com/v1/logs",
      headers: { authorization: "Basic YTpi=", "x-tenant": "acme" },
    });
  });
});
