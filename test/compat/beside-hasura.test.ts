// Living beside the app (contract move-in §5, issue 30's "done means" and its crowd): `wrangler dev` with its local
// queues, the Postgres mirror bound (test/compat/mirror-database.ts) and two webhook endpoints on loopback, each
// verifying every delivery's Standard Webhooks signature with the `standardwebhooks` library as an app would.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  authUrl,
  client,
  followLink,
  mailedLink,
  PASSWORD,
  REDIRECT,
  serverUrl,
  uniqueEmail,
} from "./client";

const { url: mirrorUrl } = inject("mirrorDatabase");
const adminSecret = inject("adminSecret");

interface Delivery {
  id: string;
  type: string;
  sequence: number;
  subject: string;
  data: Record<string, unknown>;
}

/**
 * An app's webhook endpoint: verifies each delivery with its secret, refuses (503) while `down`, and keeps what it
 * accepted. `attempts` counts every request, refused ones too.
 */
async function receiver() {
  const state = {
    secret: "",
    down: false,
    attempts: 0,
    badSignatures: 0,
    accepted: [] as Delivery[],
    url: "",
    server: null as Server | null,
  };
  state.server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      state.attempts++;
      if (state.down) {
        response.writeHead(503).end("down for maintenance");
        return;
      }
      const body = Buffer.concat(chunks).toString("utf8");
      try {
        const payload = new Webhook(state.secret).verify(
          body,
          request.headers as Record<string, string>,
        ) as Delivery;
        expect(payload.id).toBe(request.headers["webhook-id"]);
        state.accepted.push(payload);
        response.writeHead(204).end();
      } catch {
        state.badSignatures++;
        response.writeHead(401).end("bad signature");
      }
    });
  });
  await new Promise<void>((resolve) => state.server!.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}/hooks`;
  return {
    state,
    /** Deliveries about `subject`, deduplicated on the event id as the contract tells receivers to, in order. */
    of(subject: string): Delivery[] {
      const unique = new Map<string, Delivery>();
      for (const delivery of state.accepted)
        if (delivery.subject === subject) unique.set(delivery.id, delivery);
      return [...unique.values()].sort((a, b) => a.sequence - b.sequence);
    },
    close: () => new Promise<void>((resolve) => state.server!.close(() => resolve())),
  };
}

type Receiver = Awaited<ReturnType<typeof receiver>>;

async function admin(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${authUrl}/admin${path}`, {
    method,
    headers: { "x-hasura-admin-secret": adminSecret, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function register(endpoint: Receiver): Promise<string> {
  const answer = await admin("POST", "/webhooks", { url: endpoint.state.url, description: "compat" });
  expect(answer.status, `${endpoint.state.url}: ${await answer.clone().text()}`).toBe(201);
  const created = (await answer.json()) as { id: string; secret: string };
  expect(created.secret).toMatch(/^whsec_/);
  endpoint.state.secret = created.secret;
  return created.id;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(
  check: () => Promise<boolean> | boolean,
  what: string | (() => Promise<string>),
  ms: number,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`not within ${ms} ms: ${typeof what === "string" ? what : await what()}`);
    await sleep(200);
  }
}

let first: Receiver;
let second: Receiver;
const endpointIds: string[] = [];
let mirror: pg.Pool;

beforeAll(async () => {
  first = await receiver();
  second = await receiver();
  endpointIds.push(await register(first), await register(second));
  mirror = new pg.Pool({ connectionString: mirrorUrl, max: 2 });
  mirror.on("error", () => {});
});

afterAll(async () => {
  // Other files' events would keep going to endpoints no one listens to.
  for (const id of endpointIds) await admin("DELETE", `/webhooks/${id}`);
  await Promise.all([first?.close(), second?.close(), mirror?.end()]);
});

/** Every delivery of a subject is in order without a gap: 1, 2, … n. */
function inOrder(deliveries: Delivery[]): boolean {
  return deliveries.every((delivery, index) => delivery.sequence === index + 1);
}

describe("the event stream beside the app: mirror and webhooks", () => {
  // "Done means": what an app does through @nhost/nhost-js shows up at its webhook endpoint, signed, in order, and
  // in its Postgres. Threat: a receiver that trusts unsigned calls (every delivery here is verified or refused).
  it("a user's life through nhost-js reaches both endpoints, signed and in order, and the mirror", async () => {
    const nhost = client();
    const email = uniqueEmail("beside");
    await nhost.auth.signUpEmailPassword({ email, password: PASSWORD, options: { redirectTo: REDIRECT } });
    await followLink(await mailedLink(email));
    const signedIn = await nhost.auth.signInEmailPassword({ email, password: PASSWORD });
    const session = signedIn.body.session!;
    const userId = session.user!.id;
    const patched = await admin("PATCH", `/users/${userId}`, { displayName: "Beside Hasura" });
    expect(patched.status).toBe(200);
    const uploaded = await nhost.storage.uploadFiles({
      "file[]": [new File(["beside the app"], "beside.txt", { type: "text/plain" })],
    });
    const fileId = uploaded.body.processedFiles[0]!.id;
    await nhost.storage.deleteFile(fileId);
    await nhost.auth.signOut({ refreshToken: session.refreshToken });

    const expected = [
      "user.created",
      "email.verified",
      // The verification link signs the browser in, then the app signs in with the password: two sessions.
      "session.created",
      "session.created",
      "user.updated",
      "file.uploaded",
      "file.deleted",
      "session.revoked",
    ];
    for (const [index, endpoint] of [first, second].entries()) {
      await until(
        () => endpoint.of(userId).length >= expected.length,
        async () =>
          `${expected.length} deliveries, got ${endpoint.of(userId).map((d) => d.type)}; the service says ${JSON.stringify(
            await (await admin("GET", `/webhooks/${endpointIds[index]}/deliveries`)).json(),
          ).slice(0, 1500)}`,
        30_000,
      );
      const deliveries = endpoint.of(userId);
      expect(deliveries.map((delivery) => delivery.type)).toEqual(expected);
      expect(inOrder(deliveries)).toBe(true);
    }
    const methods = first
      .of(userId)
      .filter((delivery) => delivery.type === "session.created")
      .map((delivery) => (delivery.data.session as { method: string }).method);
    expect(methods).toEqual(["email-link", "email-password"]);
    expect(first.state.badSignatures + second.state.badSignatures).toBe(0);
    const uploadedFile = first.of(userId).find((delivery) => delivery.type === "file.uploaded")!;
    expect(uploadedFile.data.file).toMatchObject({
      id: fileId,
      name: "beside.txt",
      uploadedByUserId: userId,
    });

    await until(
      async () =>
        (
          await mirror.query("SELECT 1 FROM auth.users WHERE id = $1 AND display_name = $2", [
            userId,
            "Beside Hasura",
          ])
        ).rowCount === 1,
      "the profile change in the mirror",
      30_000,
    );
  }, 90_000);

  // The crowd (issue 30): 200 sign-ups in flight with the mirror and two endpoints on, one endpoint down for a while.
  // Every sign-up answers 200 (the stream never slows or fails a request); every user is in the mirror once; every
  // event reaches both endpoints, the one that was down through the queue's retries, none twice after deduplication
  // on its id, and in order per user.
  it("200 sign-ups in flight: all 200, every user mirrored once, every event at both endpoints in order", async () => {
    second.state.down = true;
    const emails = Array.from({ length: 200 }, () => uniqueEmail("crowd-stream"));
    const answers = await Promise.all(
      emails.map((email) =>
        fetch(`${authUrl}/signup/email-password`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email, password: PASSWORD, options: { redirectTo: REDIRECT } }),
        }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    // The endpoint comes back after a few of its retries.
    await until(() => second.state.attempts > 0, "a first attempt at the endpoint that is down", 30_000);
    await sleep(3_000);
    second.state.down = false;

    const { rows } = await (async () => {
      let result: { rows: { id: string; email: string }[] } = { rows: [] };
      await until(
        async () => {
          result = await mirror.query<{ id: string; email: string }>(
            "SELECT id, email FROM auth.users WHERE email = ANY($1::text[])",
            [emails],
          );
          return result.rows.length === emails.length;
        },
        "200 users in the mirror",
        90_000,
      );
      return result;
    })();
    expect(new Set(rows.map((row) => row.email)).size).toBe(200);
    const ids = rows.map((row) => row.id);
    for (const endpoint of [first, second]) {
      await until(
        () => ids.every((id) => endpoint.of(id).some((delivery) => delivery.type === "user.created")),
        "a user.created for each of the 200 users",
        90_000,
      );
      for (const id of ids) {
        const deliveries = endpoint.of(id);
        expect(deliveries[0]!.type).toBe("user.created");
        expect(inOrder(deliveries)).toBe(true);
      }
    }
    // The endpoint that was down refused some attempts, then took every event: retried, not lost.
    expect(second.state.attempts).toBeGreaterThan(second.state.accepted.length);
    expect(first.state.badSignatures + second.state.badSignatures).toBe(0);
    // The service itself stayed healthy throughout.
    expect((await fetch(`${serverUrl}/auth/v1/healthz`)).status).toBe(200);
  }, 240_000);
});
