// Webhooks in the console (server-rendered, src/admin/console/webhook-routes.ts): add an endpoint (the secret shown
// once), its deliveries arriving through the real queues, redeliver, disable, delete; the dead letters' page. Every
// action goes through the console's Origin and CSRF check. The threat named above each test is what it keeps out.
import { createMessageBatch, env } from "cloudflare:test";
import { afterAll, describe, expect, it } from "vitest";
import { handleQueueBatch } from "../../src/runtime/consumers";
import { SERVER, signUp } from "../helpers";
import { admin, deliveriesFor, eventually, received, receiverUrl, svc, verified } from "./support";

const SECRET = String(env.AUTH_ADMIN_SECRET);
const BASE = "/admin/console";
const ORIGIN = new URL(SERVER).origin;

const made: string[] = [];
afterAll(async () => {
  for (const id of made) await admin("DELETE", `/webhooks/${id}`);
});

const postForm = (path: string, values: [string, string][], cookie: string, origin = ORIGIN) =>
  svc.request("POST", `${BASE}${path}`, {
    body: new URLSearchParams(values).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", origin, cookie },
  });

async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const response = await postForm("/login", [["secret", SECRET]], "");
  const cookie = response.headers.get("set-cookie")!.split(";")[0]!;
  const page = await (await svc.request("GET", BASE, { headers: { cookie } })).text();
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(page)![1]! };
}

const getPage = async (cookie: string, path: string) => {
  const response = await svc.request("GET", `${BASE}${path}`, { headers: { cookie } });
  return { status: response.status, text: await response.text(), response };
};

describe("webhooks in the console", () => {
  // Threat: the secret left on a page anyone reopens later (history, a shared screen), or in a URL.
  it("adds an endpoint and shows its secret once; deliveries arrive and show; redeliver, disable, delete", async () => {
    const { cookie, csrf } = await signIn();
    const url = receiverUrl("console");
    const created = await postForm(
      "/webhooks/create",
      [
        ["csrf", csrf],
        ["url", url],
        ["description", "Billing sync"],
        ["events", "user.updated"],
      ],
      cookie,
    );
    expect(created.status).toBe(200);
    const page = await created.text();
    const secret = /<code class="secret">(whsec_[^<]+)<\/code>/.exec(page)?.[1];
    expect(secret).toMatch(/^whsec_/);
    expect(page).not.toContain("<script");
    const id = /\/webhooks\/(wh_[0-9a-f]{32})\//.exec(page)![1]!;
    made.push(id);
    const again = await getPage(cookie, `/webhooks/${id}`);
    expect(again.text).toContain("Billing sync");
    expect(again.text).toContain(url);
    expect(again.text).not.toContain(secret!);
    expect(again.response.headers.get("content-security-policy")).toMatch(/script-src 'none'|default-src/);
    const list = await getPage(cookie, "/webhooks");
    expect(list.text).toContain(url);
    expect(list.text).not.toContain(secret!);
    expect(list.text).toMatch(
      /<a href="[^"]*\/dead-letters">Review and send again|nothing ran out of retries/,
    );

    const { user } = await signUp(svc);
    expect((await admin("PATCH", `/users/${user.id}`, { displayName: "Hedy Lamarr" })).status).toBe(200);
    const [delivery] = await eventually(
      () => deliveriesFor(id, user.id),
      (items) => items[0]?.status === "delivered",
    );
    const shown = await getPage(cookie, `/webhooks/${id}`);
    expect(shown.text).toContain(delivery!.eventId);
    expect(shown.text).toContain(">delivered<");

    const redelivered = await postForm(
      `/webhooks/${id}/deliveries/${delivery!.id}/redeliver`,
      [["csrf", csrf]],
      cookie,
    );
    expect(redelivered.status).toBe(303);
    const posts = await eventually(
      async () => (await received(url)).filter((post) => post.body.includes(user.id)),
      (all) => all.length >= 2,
    );
    expect(verified(secret!, posts).map((payload) => payload.id)).toEqual([
      delivery!.eventId,
      delivery!.eventId,
    ]);

    expect((await postForm(`/webhooks/${id}/disable`, [["csrf", csrf]], cookie)).status).toBe(303);
    expect((await getPage(cookie, `/webhooks/${id}`)).text).toContain("badge off");
    // A refused URL is said on the form's page, nothing changed.
    const refused = await postForm(
      `/webhooks/${id}/edit`,
      [
        ["csrf", csrf],
        ["url", "http://169.254.169.254/latest/meta-data/"],
      ],
      cookie,
    );
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("not a URL this service posts to");
    const deleted = await postForm(
      `/webhooks/${id}/delete`,
      [
        ["csrf", csrf],
        ["confirm", "yes"],
      ],
      cookie,
    );
    expect(deleted.status).toBe(303);
    expect((await getPage(cookie, `/webhooks/${id}`)).status).toBe(404);
  }, 30_000);

  // Threat: cross-site request forgery making a signed-in operator's browser add an attacker's endpoint.
  it("refuses a post without the session's CSRF token or from another origin", async () => {
    const { cookie, csrf } = await signIn();
    const url = receiverUrl("csrf");
    for (const [values, origin] of [
      [[["url", url]], ORIGIN],
      [
        [
          ["csrf", "forged"],
          ["url", url],
        ],
        ORIGIN,
      ],
      [
        [
          ["csrf", csrf],
          ["url", url],
        ],
        "https://evil.example",
      ],
    ] as [[string, string][], string][]) {
      const response = await postForm("/webhooks/create", values, cookie, origin);
      expect(response.status).toBe(403);
    }
    const list = (await (await admin("GET", "/webhooks?limit=500")).json()) as { items: { url: string }[] };
    expect(list.items.some((item) => item.url === url)).toBe(false);
  });

  it("lists dead letters and sends the picked ones again", async () => {
    const { cookie, csrf } = await signIn();
    const letterId = `dl-console-${crypto.randomUUID()}`;
    await handleQueueBatch(
      createMessageBatch("edge-auth-dead-letters", [
        { id: letterId, timestamp: new Date(), attempts: 17, body: { deliveryId: "whd_gone" } },
      ]),
      env,
    );
    const page = await getPage(cookie, "/dead-letters");
    expect(page.status).toBe(200);
    expect(page.text).toContain("webhook delivery whd_gone");
    const sent = await postForm(
      "/dead-letters/redeliver",
      [
        ["csrf", csrf],
        ["ids", letterId],
      ],
      cookie,
    );
    expect(sent.status).toBe(303);
    expect(sent.headers.get("location")).toContain("done=dead-letters-redelivered");
    expect((await getPage(cookie, "/dead-letters")).text).not.toContain(letterId);
    const none = await postForm("/dead-letters/redeliver", [["csrf", csrf]], cookie);
    expect(none.status).toBe(403);
    expect(await none.text()).toContain("pick at least one dead letter");
  });
});
