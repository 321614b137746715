// Webhook endpoints through the admin API (contract move-in §5.2, auth.md §10): create, read, change, delete, the
// deliveries' list and the dead letters' routes; every bad input a 4xx in the contract's shape. The threat named
// above each test is what it keeps out.
import { env } from "cloudflare:test";
import { afterAll, describe, expect, it } from "vitest";
import { decrypt } from "../../src/lib/crypto";
import type { WireDelivery, WireEndpoint } from "../../src/webhooks";
import { expectContractError, expectError } from "../helpers";
import { ADMIN, admin, createEndpoint, receiverUrl, svc } from "./support";

const made: string[] = [];
async function endpoint(body: Record<string, unknown> = {}) {
  // A type no test here causes: the stream's own consumers leave these endpoints alone.
  const created = await createEndpoint({ url: receiverUrl("admin"), events: ["file.updated"], ...body });
  made.push(created.id);
  return created;
}

afterAll(async () => {
  for (const id of made) await admin("DELETE", `/webhooks/${id}`);
});

async function insertDelivery(endpointId: string, createdAt: number, status = "pending") {
  const id = `whd_test${crypto.randomUUID().replace(/-/g, "")}`;
  await env.DB.prepare(
    "INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, payload, status, attempts, created_at) VALUES (?, ?, ?, 'user.created', '{}', ?, 0, ?)",
  )
    .bind(id, endpointId, `evt_${crypto.randomUUID().replace(/-/g, "")}`, status, createdAt)
    .run();
  return id;
}

describe("webhooks admin API: the admin secret", () => {
  // Threat: anyone registering a URL of theirs and receiving every user's profile.
  it("answers 401 without the admin secret, or with a wrong one", async () => {
    for (const [method, path] of [
      ["GET", "/admin/webhooks"],
      ["POST", "/admin/webhooks"],
      ["GET", "/admin/events/dead-letters"],
      ["POST", "/admin/events/dead-letters/redeliver"],
    ]) {
      const json = method === "POST" ? {} : undefined;
      await expectError(await svc.request(method!, path!, { json }), 401, "unauthorized");
      await expectError(
        await svc.request(method!, path!, { json, headers: { "x-hasura-admin-secret": "wrong" } }),
        401,
        "unauthorized",
      );
    }
  });
});

describe("webhooks admin API: endpoints", () => {
  // Threat: the signing secret read back later (a log of API answers, a leaked admin session) to forge deliveries.
  it("shows the secret once, in the creation's answer, and keeps it sealed", async () => {
    const response = await admin("POST", "/webhooks", {
      url: receiverUrl("admin"),
      description: "CRM sync",
      events: ["file.updated"],
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const created = (await response.json()) as WireEndpoint & { secret: string };
    made.push(created.id);
    expect(created).toEqual({
      id: expect.stringMatching(/^wh_[0-9a-f]{32}$/),
      url: expect.stringMatching(/^https:\/\/webhooks\.fake\/admin-/),
      events: ["file.updated"],
      description: "CRM sync",
      disabled: false,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(atob(created.secret.slice(6)).length).toBe(32);

    const read = (await (await admin("GET", `/webhooks/${created.id}`)).json()) as Record<string, unknown>;
    expect(read).not.toHaveProperty("secret");
    const { secret: _secret, ...withoutSecret } = created;
    expect(read).toEqual(withoutSecret);
    const list = (await (await admin("GET", "/webhooks?limit=500")).json()) as { items: WireEndpoint[] };
    expect(list.items.find((item) => item.id === created.id)).toEqual(withoutSecret);
    expect(JSON.stringify(list)).not.toContain(created.secret.slice(6));

    const row = await env.DB.prepare("SELECT secret_sealed FROM webhook_endpoints WHERE id = ?")
      .bind(created.id)
      .first<{ secret_sealed: string }>();
    expect(row!.secret_sealed).not.toContain(created.secret.slice(6, 20));
    expect(await decrypt(String(env.AUTH_ENCRYPTION_KEY), row!.secret_sealed)).toBe(created.secret);
  });

  it("delivers every type by default (stored as []), and a list of types deduplicated in the stream's order", async () => {
    const all = await endpoint({ events: undefined });
    expect(all.events).toEqual([]);
    expect(all.description).toBeNull();
    const some = await endpoint({ events: ["file.deleted", "user.created", "file.deleted"] });
    expect(some.events).toEqual(["user.created", "file.deleted"]);
  });

  // Threat: a typo that silently subscribes to nothing.
  it("refuses unknown event types, naming them", async () => {
    const response = await admin("POST", "/webhooks", {
      url: receiverUrl("admin"),
      events: ["user.created", "user.exploded", "order.paid"],
    });
    const body = await expectError(response, 400, "invalid-request");
    expect(body.message).toContain("user.exploded, order.paid");
    const { id } = await endpoint();
    const patched = await admin("PATCH", `/webhooks/${id}`, { events: ["session.*"] });
    expect((await expectError(patched, 400, "invalid-request")).message).toContain("session.*");
  });

  // Threat: SSRF, the service made to post (with user data) to the cloud metadata service, loopback, the LAN or
  // itself, in any spelling; a scheme that is not the web's; credentials in the URL.
  it("refuses URLs outside the outbound-URL policy, at creation and at change", async () => {
    const { id } = await endpoint();
    for (const url of [
      "http://169.254.169.254/latest/meta-data/",
      "https://169.254.169.254/latest/meta-data/",
      "https://[fd00:ec2::254]/",
      "http://localhost",
      "https://localhost:8787/auth/v1/admin/users",
      "https://127.0.0.1/",
      "https://2130706433/",
      "https://0x7f.1/",
      "https://[::1]/",
      "https://metadata.google.internal/computeMetadata/v1/",
      "https://printer.local/",
      "https://intranet/",
      "http://hooks.example.com/",
      "file:///etc/passwd",
      "ftp://hooks.example.com/",
      "javascript:alert(1)",
      "https://user:pass@hooks.example.com/",
      "not a URL",
      `https://hooks.example.com/${"a".repeat(2100)}`,
    ]) {
      const created = await admin("POST", "/webhooks", { url });
      const refusal = await expectError(created, 400, "invalid-request");
      expect(refusal.message, url).toMatch(/^url: /);
      await expectError(await admin("PATCH", `/webhooks/${id}`, { url }), 400, "invalid-request");
    }
    const still = (await (await admin("GET", `/webhooks/${id}`)).json()) as WireEndpoint;
    expect(still.url).toMatch(/^https:\/\/webhooks\.fake\//);
  });

  it("changes url, events, description and disabled; leaves out what the body leaves out", async () => {
    const created = await endpoint({ description: "first" });
    const url = receiverUrl("admin-moved");
    const response = await admin("PATCH", `/webhooks/${created.id}`, {
      url,
      events: ["user.deleted"],
      disabled: true,
    });
    expect(response.status).toBe(200);
    const changed = (await response.json()) as WireEndpoint;
    expect(changed).toMatchObject({ url, events: ["user.deleted"], description: "first", disabled: true });
    expect(changed).not.toHaveProperty("secret");
    const cleared = (await (
      await admin("PATCH", `/webhooks/${created.id}`, { description: null, events: [] })
    ).json()) as WireEndpoint;
    expect(cleared).toMatchObject({ url, events: [], description: null, disabled: true });
  });

  it("answers 404 not-found for an unknown endpoint or delivery, and deletes with its deliveries", async () => {
    const unknown = "wh_00000000000000000000000000000000";
    for (const [method, path] of [
      ["GET", `/webhooks/${unknown}`],
      ["PATCH", `/webhooks/${unknown}`],
      ["DELETE", `/webhooks/${unknown}`],
      ["GET", `/webhooks/${unknown}/deliveries`],
      ["POST", `/webhooks/${unknown}/deliveries/whd_x/redeliver`],
    ]) {
      await expectError(await admin(method!, path!, method === "PATCH" ? {} : undefined), 404, "not-found");
    }
    const one = await endpoint();
    const other = await endpoint();
    const delivery = await insertDelivery(other.id, Date.now());
    // A delivery is reached through its own endpoint only.
    await expectError(
      await admin("POST", `/webhooks/${one.id}/deliveries/${delivery}/redeliver`),
      404,
      "not-found",
    );
    const deleted = await admin("DELETE", `/webhooks/${other.id}`);
    expect(deleted.status).toBe(204);
    await expectError(await admin("GET", `/webhooks/${other.id}`), 404, "not-found");
    const left = await env.DB.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = ?")
      .bind(other.id)
      .first<{ n: number }>();
    expect(left!.n).toBe(0);
  });

  it("lists deliveries newest first, paged, narrowed by status", async () => {
    const { id } = await endpoint();
    // Disabled: no event of another test adds a delivery to the list under test.
    expect((await admin("PATCH", `/webhooks/${id}`, { disabled: true })).status).toBe(200);
    const base = Date.now();
    const oldest = await insertDelivery(id, base - 3000, "failed");
    const middle = await insertDelivery(id, base - 2000, "delivered");
    const newest = await insertDelivery(id, base - 1000);
    const first = await admin("GET", `/webhooks/${id}/deliveries?limit=2`);
    expect(first.status).toBe(200);
    const page = (await first.json()) as { items: WireDelivery[]; nextCursor: string };
    expect(page.items.map((item) => item.id)).toEqual([newest, middle]);
    expect(page.items[0]).toEqual({
      id: newest,
      eventId: expect.stringMatching(/^evt_/),
      eventType: "user.created",
      status: "pending",
      attempts: 0,
      lastStatus: null,
      lastResponse: null,
      lastAttemptAt: null,
      deliveredAt: null,
      createdAt: new Date(base - 1000).toISOString(),
    });
    const rest = (await (
      await admin("GET", `/webhooks/${id}/deliveries?limit=2&cursor=${page.nextCursor}`)
    ).json()) as { items: WireDelivery[]; nextCursor: string | null };
    expect(rest).toEqual({ items: [expect.objectContaining({ id: oldest })], nextCursor: null });
    const failed = (await (await admin("GET", `/webhooks/${id}/deliveries?status=failed`)).json()) as {
      items: WireDelivery[];
    };
    expect(failed.items.map((item) => item.id)).toEqual([oldest]);
  });
});

describe("webhooks admin API: hostile input never causes a 5xx", () => {
  const huge = "x".repeat(20_000);
  it("bodies of POST and PATCH", async () => {
    const { id } = await endpoint();
    for (const [label, body] of [
      ["malformed JSON", '{"url": '],
      ["a JSON array", "[]"],
      ["null", "null"],
      ["no url", "{}"],
      ["wrong types", JSON.stringify({ url: 42, events: "user.created", description: [], disabled: "yes" })],
      ["huge strings", JSON.stringify({ url: `https://${huge}.example.com/`, description: huge })],
      [
        "many events",
        JSON.stringify({ url: "https://hooks.example.com/", events: Array(500).fill("user.created") }),
      ],
      ["prototype keys", '{"__proto__": {"disabled": true}, "constructor": {"prototype": {}}}'],
    ] as const) {
      for (const [method, path] of [
        ["POST", "/admin/webhooks"],
        ["PATCH", `/admin/webhooks/${id}`],
      ]) {
        if (method === "PATCH" && label === "no url") continue;
        const response = await svc.request(method!, path!, {
          body,
          headers: { ...ADMIN, "content-type": "application/json" },
        });
        // A PATCH of no known field changes nothing: `__proto__` smuggles no `disabled` in.
        if (method === "PATCH" && label === "prototype keys") {
          expect(((await response.json()) as WireEndpoint).disabled).toBe(false);
          continue;
        }
        await expectContractError(response, `${method} ${label}`);
      }
    }
    const plain = await svc.request("POST", "/admin/webhooks", {
      body: "url=https://hooks.example.com/",
      headers: { ...ADMIN, "content-type": "application/x-www-form-urlencoded" },
    });
    await expectContractError(plain, "a form body");
  });

  it("ids, cursors, limits and statuses", async () => {
    const { id } = await endpoint();
    for (const path of [
      `/admin/webhooks/${huge}`,
      "/admin/webhooks/'%20OR%201=1--",
      "/admin/webhooks?limit=0",
      "/admin/webhooks?limit=501",
      "/admin/webhooks?cursor=W10",
      `/admin/webhooks?cursor=${huge.slice(0, 400)}`,
      `/admin/webhooks/${id}/deliveries?status=lost`,
      `/admin/webhooks/${id}/deliveries?cursor=%00`,
      "/admin/events/dead-letters?limit=-1",
      "/admin/events/dead-letters?cursor=WyJ4IiwxXQ",
    ]) {
      await expectContractError(await svc.request("GET", path, { headers: ADMIN }), path.slice(0, 60));
    }
    for (const body of [{}, { ids: [] }, { ids: "dl_1" }, { ids: [42] }, { ids: Array(101).fill("x") }]) {
      await expectContractError(
        await admin("POST", "/events/dead-letters/redeliver", body),
        JSON.stringify(body).slice(0, 40),
      );
    }
  });

  it("redelivering dead letters that are not there sends nothing", async () => {
    const response = await admin("POST", "/events/dead-letters/redeliver", { ids: ["no-such-letter"] });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ redelivered: 0 });
  });
});
