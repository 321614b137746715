// A receiver of the app's hooks (contract move-in §5.3) for the tests: it stands in the OUTBOUND binding, verifies
// every call's Standard Webhooks signature with the `standardwebhooks` library (as an app would) and answers as the
// scenario says. Every other URL goes on to the fakes of test/fakes/outbound.js (the identity providers).
import { env } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { allInShards, userD1 } from "../support/shards";

/** A `whsec_` secret as an app generates one: 32 random bytes, base64. */
export function newSecret(): string {
  return `whsec_${btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))}`;
}

export const HOOK_URL = {
  BEFORE_USER_CREATED: "https://hooks.app.example/before-user-created",
  CUSTOM_ACCESS_TOKEN: "https://hooks.app.example/custom-access-token",
  SEND_EMAIL: "https://hooks.app.example/send-email",
  SEND_SMS: "https://hooks.app.example/send-sms",
  PASSWORD_MIGRATION: "https://hooks.app.example/password-migration",
  BEFORE_SIGN_IN: "https://hooks.app.example/before-sign-in",
} as const;

export type HookName = keyof typeof HOOK_URL;

// biome-ignore lint/suspicious/noExplicitAny: the payloads are the wire's JSON, read by each test
export type Payload = any;

/** How the app answers one call; the request is there for its abort signal. */
export type Scenario = (payload: Payload, request: Request) => Response | Promise<Response>;

export interface ReceivedCall {
  hook: HookName;
  payload: Payload;
  headers: Record<string, string>;
}

/** Answers that an app's hook gives, and the faults it can have. */
export const answers = {
  json:
    (body: unknown, status = 200): Scenario =>
    () =>
      Response.json(body, { status }),
  noContent: (): Scenario => () => new Response(null, { status: 204 }),
  status:
    (status: number): Scenario =>
    () =>
      new Response("internal error", { status }),
  garbage: (): Scenario => () =>
    new Response("<html>oops</html>", { status: 200, headers: { "content-type": "text/html" } }),
  /** Never answers: what a fetch does when the app hangs, until the service's deadline aborts it. */
  hang: (): Scenario => (_payload, request) =>
    new Promise((_, reject) => request.signal.addEventListener("abort", () => reject(request.signal.reason))),
  /** The fetch fails as it does once the deadline passed (without waiting 5 s: call.test.ts proves the bound). */
  timedOut: (): Scenario => () =>
    Promise.reject(new DOMException("the hook did not answer in time", "TimeoutError")),
  unreachable: (): Scenario => () => Promise.reject(new TypeError("Network connection lost.")),
};

/**
 * The bindings that configure `hooks` (each with a fresh secret) and route their calls to `scenarios`, and the calls
 * received, each verified: a call whose signature does not verify is not recorded and answers 401, so the flow
 * under test fails closed and the test sees it.
 */
export function hookReceiver(scenarios: Partial<Record<HookName, Scenario>>) {
  const secrets: Partial<Record<HookName, string>> = {};
  const bindings: Record<string, unknown> = {};
  const calls: ReceivedCall[] = [];
  const unverified: string[] = [];
  for (const name of Object.keys(scenarios) as HookName[]) {
    secrets[name] = newSecret();
    bindings[`AUTH_HOOK_${name}_URL`] = HOOK_URL[name];
    bindings[`AUTH_HOOK_${name}_SECRET`] = secrets[name];
  }
  const outbound = {
    async fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
      const url = input instanceof Request ? input.url : String(input);
      const hook = (Object.keys(HOOK_URL) as HookName[]).find((name) => HOOK_URL[name] === url);
      const scenario = hook && scenarios[hook];
      if (!hook || !scenario) return env.OUTBOUND!.fetch(input, init);
      const request = new Request(input, init);
      const body = await request.text();
      const headers = Object.fromEntries(request.headers);
      let payload: Payload;
      try {
        payload = new Webhook(secrets[hook]!).verify(body, headers);
      } catch (error) {
        unverified.push(`${hook}: ${(error as Error).message}`);
        return new Response("bad signature", { status: 401 });
      }
      calls.push({ hook, payload, headers });
      return scenario(payload, request);
    },
  };
  return {
    bindings: { ...bindings, OUTBOUND: outbound },
    calls,
    unverified,
    callsOf: (hook: HookName) => calls.filter((call) => call.hook === hook).map((call) => call.payload),
  };
}

/** The `hook.called` audit events about `userId` (the user created, or the one that was about to be), oldest first. */
export async function hookEvents(userId: string): Promise<Record<string, unknown>[]> {
  // A user's audit events are in the user's shard (src/audit/record.ts), even those of a user refused before it was.
  const { results } = await userD1(userId)
    .prepare("SELECT detail FROM audit_events WHERE type = 'hook.called' AND user_id = ? ORDER BY at, rowid")
    .bind(userId)
    .all<{ detail: string }>();
  return results.map((row) => JSON.parse(row.detail) as Record<string, unknown>);
}

/** Users with `email`, in every shard. */
export async function usersWithEmail(email: string): Promise<number> {
  const rows = await allInShards<{ n: number }>(
    "SELECT count(*) AS n FROM users WHERE email = ?",
    email.toLowerCase(),
  );
  return rows.reduce((sum, row) => sum + row.n, 0);
}
