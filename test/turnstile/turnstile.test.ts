// Cloudflare Turnstile (contract §9) against a fake siteverify (test/fakes/outbound.js) that behaves as Cloudflare
// documents: tokens verify once, name the hostname and action they were solved for, and the secret must match.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { getConfig } from "../../src/runtime/config";
import { expectError, NO_VERIFICATION, PASSWORD, service, uniqueEmail } from "../helpers";
import { withShortTimeouts } from "../support/timeouts";

const SITEVERIFY = "https://turnstile.fake/siteverify";
const ON = {
  ...NO_VERIFICATION,
  AUTH_TURNSTILE_SECRET: "turnstile-secret",
  AUTH_TURNSTILE_VERIFY_URL: SITEVERIFY,
};

/** A token the fake accepts once: solved on `hostname` for `action`, unique per call. */
const solved = (action = "signup", hostname = "localhost") =>
  `pass:${hostname}:${action}:${crypto.randomUUID()}`;

/** What siteverify received for a token (the fake keeps every body). */
async function received(token: string): Promise<Record<string, string>[]> {
  const url = `https://turnstile.fake/__verified?response=${encodeURIComponent(token)}`;
  return (await (await env.OUTBOUND!.fetch(url)).json()) as Record<string, string>[];
}

function signUpWith(svc: ReturnType<typeof service>, token?: string, email = uniqueEmail("turnstile")) {
  return svc.request("POST", "/signup/email-password", {
    json: { email, password: PASSWORD },
    headers: {
      "cf-connecting-ip": "203.0.113.7",
      ...(token === undefined ? {} : { "x-cf-turnstile-response": token }),
    },
  });
}

describe("Turnstile on sign-up (the default guarded endpoint)", () => {
  it("is off until AUTH_TURNSTILE_SECRET is set: sign-up needs no header", async () => {
    expect((await signUpWith(service(NO_VERIFICATION))).status).toBe(200);
  });

  // Threat: scripted mass sign-up. Without a passed challenge nothing is created.
  it("requires the header, and refuses a token siteverify refuses", async () => {
    const svc = service(ON);
    await expectError(await signUpWith(svc), 400, "turnstile-required");
    await expectError(await signUpWith(svc, "   "), 400, "turnstile-required");
    await expectError(await signUpWith(svc, "not-a-real-token"), 403, "turnstile-failed");
  });

  it("passes a solved token, sending secret, response, the client address and an idempotency key", async () => {
    const token = solved();
    const response = await signUpWith(service(ON), token);
    expect(response.status).toBe(200);
    const [body] = await received(token);
    expect(body).toMatchObject({ secret: "turnstile-secret", response: token, remoteip: "203.0.113.7" });
    expect(body!.idempotency_key).toMatch(/^[0-9a-f-]{36}$/);
  });

  // Threat: one solved challenge reused for a batch of sign-ups.
  it("a token is single use: the same token again is refused", async () => {
    const svc = service(ON);
    const token = solved();
    expect((await signUpWith(svc, token)).status).toBe(200);
    await expectError(await signUpWith(svc, token), 403, "turnstile-failed");
  });

  // Threat: tokens farmed on the attacker's own site (with our public site key) or on another of our forms.
  it("refuses a token solved on another hostname or for another action; accepts one with no action", async () => {
    const svc = service(ON);
    await expectError(await signUpWith(svc, solved("signup", "evil.example")), 403, "turnstile-failed");
    await expectError(await signUpWith(svc, solved("signin")), 403, "turnstile-failed");
    expect((await signUpWith(svc, solved(""))).status).toBe(200);
    // The hostnames can be named outright (a front-end on another host).
    const named = service({ ...ON, AUTH_TURNSTILE_HOSTNAMES: "app.example.org" });
    expect((await signUpWith(named, solved("signup", "app.example.org"))).status).toBe(200);
    await expectError(await signUpWith(named, solved()), 403, "turnstile-failed");
  });

  it("a malformed body is refused before the token is spent", async () => {
    const token = solved();
    const response = await service(ON).request("POST", "/signup/email-password", {
      json: { email: "not an address", password: PASSWORD },
      headers: { "x-cf-turnstile-response": token },
    });
    await expectError(response, 400, "invalid-request");
    expect(await received(token)).toEqual([]);
  });

  it("a header longer than any token is refused without asking siteverify", async () => {
    const token = `pass:localhost:signup:${"x".repeat(3000)}`;
    await expectError(await signUpWith(service(ON), token), 403, "turnstile-failed");
    expect(await received(token)).toEqual([]);
  });
});

describe("Turnstile fails closed", () => {
  // Threat: an attacker who can make siteverify slow or unreachable must not get a pass; nor may the visitor get a 500.
  it.each([
    ["slow", "never answering in time"],
    ["stall", "sending its headers, then stalling in the body"],
    ["down", "answering 503"],
    ["garbage", "answering HTML"],
    ["shape", "answering JSON of another shape"],
  ])(
    "siteverify %s (%s): 503 turnstile-unavailable, no user created",
    async (mode) => {
      const svc = service({ ...ON, AUTH_TURNSTILE_VERIFY_URL: `https://turnstile.fake/${mode}/siteverify` });
      const email = uniqueEmail(`turnstile-${mode}`);
      // Each attempt is bounded by the service's own 2.5 s, waited out in a tenth of it (test/support/timeouts.ts).
      const requested = await withShortTimeouts(2_500, async () => {
        await expectError(await signUpWith(svc, solved(), email), 503, "turnstile-unavailable");
      });
      // One attempt, or two where a retry may help (no answer, a 5xx): each with that bound.
      expect(new Set(requested)).toEqual(new Set([2_500]));
      const signIn = await service(NO_VERIFICATION).post("/signin/email-password", {
        email,
        password: PASSWORD,
      });
      await expectError(signIn, 401, "invalid-email-password");
    },
    15_000,
  );

  it("one transport failure is retried with the same idempotency key, which is not a duplicate", async () => {
    const svc = service({ ...ON, AUTH_TURNSTILE_VERIFY_URL: "https://turnstile.fake/flaky/siteverify" });
    const token = solved();
    expect((await signUpWith(svc, token)).status).toBe(200);
    await expectError(await signUpWith(svc, token), 403, "turnstile-failed");
  });

  it("a wrong secret is the operator's problem: 503, not the visitor's 403", async () => {
    const svc = service({ ...ON, AUTH_TURNSTILE_SECRET: "not-the-secret" });
    await expectError(await signUpWith(svc, solved()), 503, "turnstile-unavailable");
  });
});

describe("which endpoints Turnstile guards", () => {
  const ALL = {
    ...ON,
    AUTH_TURNSTILE_ENDPOINTS: "signup,signin,password-reset,passwordless,oauth2-registration",
    AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
    AUTH_OTP_EMAIL_ENABLED: "true",
    AUTH_OAUTH2_PROVIDER_ENABLED: "true",
    AUTH_OAUTH2_PROVIDER_REGISTRATION: "open",
  };

  it("by default only sign-up: sign-in and reset need no header; a magic link, which may create the user, does", async () => {
    const svc = service({ ...ON, AUTH_EMAIL_PASSWORDLESS_ENABLED: "true" });
    const email = uniqueEmail("turnstile-default");
    expect((await signUpWith(svc, solved(), email)).status).toBe(200);
    expect((await svc.post("/signin/email-password", { email, password: PASSWORD })).status).toBe(200);
    expect((await svc.post("/user/password/reset", { email })).status).toBe(200);
    // Every way in meets the sign-up checks (every-way-in.test.ts), on every send, known address or not.
    await expectError(await svc.post("/signin/passwordless/email", { email }), 400, "turnstile-required");
  });

  it("each listed endpoint requires a token for its own action", async () => {
    const svc = service(ALL);
    const email = uniqueEmail("turnstile-all");
    expect((await signUpWith(svc, solved(), email)).status).toBe(200);
    const cases: [string, unknown, string][] = [
      ["/signin/email-password", { email, password: PASSWORD }, "signin"],
      ["/user/password/reset", { email }, "password-reset"],
      ["/signin/passwordless/email", { email }, "passwordless"],
      ["/signin/otp/email", { email }, "passwordless"],
      ["/signup/passwordless/email", { email: uniqueEmail("turnstile-link") }, "signup"],
    ];
    for (const [path, json, action] of cases) {
      await expectError(await svc.post(path, json), 400, "turnstile-required");
      const wrongAction = await svc.request("POST", path, {
        json,
        headers: { "x-cf-turnstile-response": solved(action === "signin" ? "signup" : "signin") },
      });
      await expectError(wrongAction, 403, "turnstile-failed");
      const passed = await svc.request("POST", path, {
        json,
        headers: { "x-cf-turnstile-response": solved(action) },
      });
      expect(passed.status, path).toBe(200);
    }
  });

  it("dynamic client registration answers in RFC 7591's error shape", async () => {
    const svc = service(ALL);
    const metadata = { client_name: "Bot", redirect_uris: ["http://127.0.0.1:4000/cb"] };
    const missing = await svc.post("/oauth2/register", metadata);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: "invalid_request" });
    const refused = await svc.request("POST", "/oauth2/register", {
      json: metadata,
      headers: { "x-cf-turnstile-response": "nope" },
    });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: "access_denied" });
    const passed = await svc.request("POST", "/oauth2/register", {
      json: metadata,
      headers: { "x-cf-turnstile-response": solved("oauth2-registration") },
    });
    expect(passed.status).toBe(201);
  });

  it("the OpenAPI document names the header on each operation it may guard", async () => {
    const doc = (await (await service(ON).get("/openapi.json")).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    for (const path of [
      "/signup/email-password",
      "/signin/email-password",
      "/user/password/reset",
      "/oauth2/register",
    ]) {
      expect(doc.paths[path]!.post!.parameters, path).toContainEqual(
        expect.objectContaining({ name: "x-cf-turnstile-response", in: "header" }),
      );
    }
  });
});

describe("Turnstile configuration", () => {
  it("refuses an http siteverify off loopback (the secret would travel in clear) and unknown endpoint names", () => {
    expect(() =>
      getConfig({
        ...env,
        AUTH_TURNSTILE_SECRET: "s",
        AUTH_TURNSTILE_VERIFY_URL: "http://verify.example.com/x",
      }),
    ).toThrow(/AUTH_TURNSTILE_VERIFY_URL/);
    expect(() =>
      getConfig({ ...env, AUTH_TURNSTILE_SECRET: "s", AUTH_TURNSTILE_ENDPOINTS: "signup,everything" }),
    ).toThrow(/AUTH_TURNSTILE_ENDPOINTS/);
    const local = getConfig({
      ...env,
      AUTH_TURNSTILE_SECRET: "s",
      AUTH_TURNSTILE_VERIFY_URL: "http://127.0.0.1:9/v",
    });
    expect(local.turnstile?.verifyUrl).toBe("http://127.0.0.1:9/v");
  });
});
