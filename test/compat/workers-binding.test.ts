// examples/workers-binding beside the compat server: the example's own `wrangler dev`, whose service binding
// (`AUTH`, entrypoint AuthService) reaches the compat server's wrangler dev through the run's dev registry
// (test/compat/wrangler-dev.ts, `devRegistry`), as a developer runs it beside `npm start`. Its API is guarded by
// @edge-auth/hono: `requireUser({ live: true })` and `requirePermission` over the example's Cedar policies.
// Threats: a session signed out (through the Nhost API, by @nhost/nhost-js) still served by the app's Worker for the
// rest of its access token's life; a permission the policies do not give (editing without the relationship).
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { authUrl, client, followLink, mailedLink, PASSWORD, REDIRECT, uniqueEmail } from "./client";
import { reservePort } from "./ports";
import { startWranglerDev, stopWranglerDev } from "./wrangler-process";

const EXAMPLE = "examples/workers-binding";
const ADMIN = { "x-hasura-admin-secret": inject("adminSecret"), "content-type": "application/json" };

const admin = (method: string, path: string, body?: unknown) =>
  fetch(`${authUrl}/admin/authz${path}`, {
    method,
    headers: ADMIN,
    body: body === undefined ? undefined : JSON.stringify(body),
  });

let example: ChildProcess | undefined;
let exampleUrl = "";
const state = mkdtempSync(join(tmpdir(), "workers-binding-"));
/** What the server had before this file set the example's schema and policies: put back at the end. */
let before: { schema: string | null; policies: string | null } = { schema: null, policies: null };

beforeAll(async () => {
  const port = await reservePort();
  exampleUrl = `http://127.0.0.1:${port.port}`;
  example = await startWranglerDev({
    label: "the example's wrangler dev",
    args: ["-c", `${EXAMPLE}/wrangler.toml`, "--persist-to", state, "--show-interactive-dev-session=false"],
    port,
    env: {
      ...process.env,
      CI: "true",
      WRANGLER_SEND_METRICS: "false",
      NO_COLOR: "1",
      WRANGLER_REGISTRY_PATH: inject("devRegistry"),
    },
    // Up when a request without a token is refused by the service through the binding (before the binding finds the
    // server in the registry, the call fails and the example answers 500).
    ready: async (signal) => (await fetch(`${exampleUrl}/api/me`, { signal })).status === 401,
    timeoutMs: 90_000,
  });
  const read = async (kind: "schema" | "policies") =>
    ((await (await admin("GET", `/${kind}`)).json()) as Record<string, string | null>)[kind] ?? null;
  before = { schema: await read("schema"), policies: await read("policies") };
  for (const [kind, file] of [
    ["schema", "schema.cedarschema"],
    ["policies", "policies.cedar"],
  ] as const) {
    const answer = await admin("PUT", `/${kind}`, { [kind]: readFileSync(`${EXAMPLE}/${file}`, "utf8") });
    expect(answer.status, await answer.clone().text()).toBe(200);
  }
}, 120_000);

afterAll(async () => {
  if (before.policies !== null || before.schema !== null) {
    await admin("PUT", "/policies", { policies: "" });
    if (before.schema !== null) await admin("PUT", "/schema", { schema: before.schema });
    if (before.policies !== null) await admin("PUT", "/policies", { policies: before.policies });
  }
  if (example) await stopWranglerDev(example);
  rmSync(state, { recursive: true, force: true });
});

/** A person who signed up, followed the mailed link and signed in with @nhost/nhost-js. */
async function signedIn() {
  const email = uniqueEmail("example");
  const nhost = client();
  await nhost.auth.signUpEmailPassword({ email, password: PASSWORD, options: { redirectTo: REDIRECT } });
  await followLink(await mailedLink(email));
  const { body } = await nhost.auth.signInEmailPassword({ email, password: PASSWORD });
  return { nhost, session: body.session! };
}

const call = (path: string, token: string, init: RequestInit = {}) =>
  fetch(`${exampleUrl}${path}`, { ...init, headers: { authorization: `Bearer ${token}` } });

describe("examples/workers-binding beside the service", () => {
  it("allows and denies by a Cedar policy and a relationship", async () => {
    const { session } = await signedIn();
    const token = session.accessToken;
    const doc = `/api/documents/${crypto.randomUUID()}`;
    // The role policy (documents-read): every user reads.
    const read = await call(doc, token);
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ readBy: session.user!.id });
    // No relationship yet: no edit (documents-edit needs `principal in resource.editors`).
    const refused = await call(doc, token, { method: "PUT", body: "draft" });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ status: 403, error: "forbidden" });
    const tuple = {
      resource: { type: "Document", id: doc.split("/").pop() },
      relation: "editors",
      subject: { type: "User", id: session.user!.id },
    };
    expect((await admin("POST", "/relationships", tuple)).status).toBe(201);
    const edited = await call(doc, token, { method: "PUT", body: "draft" });
    expect(edited.status).toBe(200);
    expect(await edited.json()).toMatchObject({ editedBy: session.user!.id, text: "draft" });
    // Another document, no relationship: still refused.
    expect((await call(`/api/documents/${crypto.randomUUID()}`, token, { method: "PUT" })).status).toBe(403);
  });

  it("refuses a session within a second of its sign-out through the Nhost API", async () => {
    const { nhost, session } = await signedIn();
    const me = await call("/api/me", session.accessToken);
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ user: { id: session.user!.id }, face: "nhost" });
    await nhost.auth.signOut({ refreshToken: session.refreshToken });
    const signedOut = Date.now();
    // The access token itself is still valid for minutes: only `live` can refuse it.
    let status = 200;
    while (status !== 401 && Date.now() - signedOut < 1000) {
      status = (await call("/api/me", session.accessToken)).status;
    }
    expect(status, "still served a second after the sign-out").toBe(401);
  });
});
