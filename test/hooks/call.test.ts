// One hook call (src/hooks/call.ts) and the hooks' settings (src/hooks/config.ts): the signature an app verifies with
// the `standardwebhooks` library, the 5 s bound on a hook that never answers, and settings refused at start-up.
import { env } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AuditEvent } from "../../src/audit/events";
import { callHook, HOOK_TIMEOUT_MS, signedRequest } from "../../src/hooks/call";
import { getConfig } from "../../src/runtime/config";
import { HOOK_URL, newSecret } from "./support";

function deps(fetcher: typeof fetch) {
  const events: AuditEvent[] = [];
  const audit = Object.assign((event: AuditEvent) => void events.push(event), {
    signInFailure: () => {},
    actAs: () => {},
    actor: () => ({ kind: "user" as const }),
  });
  const secret = newSecret();
  return {
    deps: {
      config: { hooks: { SEND_SMS: { url: HOOK_URL.SEND_SMS as string, secret, allowLoopback: false } } },
      outbound: fetcher,
      audit,
    },
    events,
    secret,
  };
}

const sent = () => ({ outcome: "sent", value: null });

describe("the signature", () => {
  it("verifies with the standardwebhooks library over the exact body sent; another secret does not", async () => {
    let received: { body: string; headers: Record<string, string> } | undefined;
    const { deps: d, secret } = deps(async (input, init) => {
      const request = new Request(input, init);
      received = { body: await request.text(), headers: Object.fromEntries(request.headers) };
      return new Response(null, { status: 204 });
    });
    await callHook(d, "SEND_SMS", { to: "+14155550100", note: "é ✓" }, sent);
    expect(new Webhook(secret).verify(received!.body, received!.headers)).toEqual({
      to: "+14155550100",
      note: "é ✓",
    });
    expect(received!.headers["webhook-id"]).toMatch(/^msg_/);
    expect(received!.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(() => new Webhook(newSecret()).verify(received!.body, received!.headers)).toThrow(
      "No matching signature found",
    );
  });

  // Threat: a captured call replayed later; the app refuses an old timestamp (5 min tolerance of the library).
  it("carries the time of the call in seconds, which the library checks", () => {
    const secret = newSecret();
    const at = new Date(Date.now() - 10 * 60_000);
    const headers = signedRequest(secret, "{}", at);
    expect(headers["webhook-timestamp"]).toBe(String(Math.floor(at.getTime() / 1000)));
    expect(() => new Webhook(secret).verify("{}", headers)).toThrow("Message timestamp too old");
  });
});

describe("the 5 s bound", () => {
  afterEach(() => vi.useRealTimers());

  // Threat: a hook that hangs holds every sign-up (and the Worker's request) open for as long as it likes.
  it("a hook that never answers is abandoned at 5 s: 503, audited as a timeout", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    let signal: AbortSignal | undefined;
    const { deps: d, events } = deps((_input, init) => {
      signal = init?.signal ?? undefined;
      return new Promise<Response>(() => {});
    });
    const call = callHook(d, "SEND_SMS", {}, sent);
    const settled = vi.fn();
    call.then(settled, settled);
    await vi.advanceTimersByTimeAsync(HOOK_TIMEOUT_MS - 1);
    expect(settled).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    await expect(call).rejects.toMatchObject({ code: "service-unavailable", status: 503 });
    expect(signal?.aborted).toBe(true);
    expect(events).toEqual([
      {
        type: "hook.called",
        userId: null,
        detail: {
          hook: "SEND_SMS",
          outcome: "timeout",
          status: null,
          ms: HOOK_TIMEOUT_MS,
          reason: expect.any(String),
        },
      },
    ]);
  });

  it("a body that stops half-way is cut off by the same deadline", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const { deps: d, events } = deps(async () => {
      const stalled = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"decis'));
        },
      });
      return new Response(stalled, { status: 200 });
    });
    const call = callHook(d, "SEND_SMS", {}, sent);
    call.catch(() => {});
    await vi.advanceTimersByTimeAsync(HOOK_TIMEOUT_MS);
    await expect(call).rejects.toMatchObject({ code: "service-unavailable" });
    expect(events[0]!.detail).toMatchObject({ outcome: "timeout" });
  });

  it("an answer over 64 KiB is refused as malformed", async () => {
    const { deps: d, events } = deps(async () => Response.json({ padding: "x".repeat(70_000) }));
    await expect(callHook(d, "SEND_SMS", {}, sent)).rejects.toMatchObject({ code: "service-unavailable" });
    expect(events[0]!.detail).toMatchObject({ outcome: "malformed" });
  });
});

describe("the settings", () => {
  const base = { ...env } as Record<string, unknown>;
  const secret = newSecret();

  it("a hook is configured by its URL and secret together", () => {
    const config = getConfig({
      ...base,
      AUTH_HOOK_SEND_EMAIL_URL: HOOK_URL.SEND_EMAIL,
      AUTH_HOOK_SEND_EMAIL_SECRET: secret,
    });
    expect(config.hooks).toEqual({ SEND_EMAIL: { url: HOOK_URL.SEND_EMAIL, secret, allowLoopback: false } });
    expect(getConfig({ ...base }).hooks).toEqual({});
  });

  it.each([
    [{ AUTH_HOOK_SEND_SMS_URL: HOOK_URL.SEND_SMS }, /AUTH_HOOK_SEND_SMS_URL and AUTH_HOOK_SEND_SMS_SECRET/],
    [{ AUTH_HOOK_SEND_SMS_SECRET: secret }, /must be set together/],
    [
      { AUTH_HOOK_SEND_SMS_URL: HOOK_URL.SEND_SMS, AUTH_HOOK_SEND_SMS_SECRET: "not-whsec" },
      /AUTH_HOOK_SEND_SMS_SECRET must be whsec_/,
    ],
    [
      { AUTH_HOOK_SEND_SMS_URL: HOOK_URL.SEND_SMS, AUTH_HOOK_SEND_SMS_SECRET: `whsec_${btoa("short")}` },
      /24 to 64 random bytes/,
    ],
    // Threat: the app's decisions and every sign-in code sent in clear over the Internet.
    [
      { AUTH_HOOK_SEND_SMS_URL: "http://hooks.app.example/sms", AUTH_HOOK_SEND_SMS_SECRET: secret },
      /AUTH_HOOK_SEND_SMS_URL: not https/,
    ],
    [
      { AUTH_HOOK_SEND_SMS_URL: "https://user:pw@hooks.app.example/sms", AUTH_HOOK_SEND_SMS_SECRET: secret },
      /with credentials/,
    ],
    [{ AUTH_HOOK_SEND_SMS_URL: "http://localhost:4000/sms", AUTH_HOOK_SEND_SMS_SECRET: secret }, /not https/],
  ])("%o is refused at start-up", (settings, message) => {
    expect(() => getConfig({ ...base, ...settings })).toThrow(message);
  });

  it("loopback over http with AUTH_OUTBOUND_ALLOW_LOCAL on a local server (development)", () => {
    const config = getConfig({
      ...base,
      AUTH_OUTBOUND_ALLOW_LOCAL: "true",
      AUTH_HOOK_SEND_SMS_URL: "http://localhost:4000/sms",
      AUTH_HOOK_SEND_SMS_SECRET: secret,
    });
    expect(config.hooks.SEND_SMS?.allowLoopback).toBe(true);
  });

  it("an IP literal passes start-up but every call is refused by the outbound-URL policy: 503, nothing sent", async () => {
    const fetcher = vi.fn();
    const { deps: d, events } = deps(fetcher);
    d.config.hooks.SEND_SMS.url = "https://203.0.113.7/sms";
    await expect(callHook(d, "SEND_SMS", {}, sent)).rejects.toMatchObject({ code: "service-unavailable" });
    expect(fetcher).not.toHaveBeenCalled();
    expect(events[0]!.detail).toMatchObject({
      outcome: "unreachable",
      reason: expect.stringMatching(/IP address/),
    });
  });
});
