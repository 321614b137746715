// The app's SEND_EMAIL and SEND_SMS hooks (contract move-in §5.3) replace the transports: every mail and text goes
// to the app, signed, with what it needs to write its own (template, locale, link or code, the user) and the message
// as this service would have sent it. A send the hook does not take fails the request that waited for it with 503
// `service-unavailable`, the way a failing transport would: nobody is told "check your inbox" for a mail never sent.
import { describe, expect, it } from "vitest";
import { expectError, mailbox, PASSWORD, service, uniqueEmail, type WireSession } from "../helpers";
import { uniquePhone } from "../support/phones";
import { answers, hookEvents, hookReceiver, usersWithEmail } from "./support";

describe("SEND_EMAIL", () => {
  const receiver = hookReceiver({ SEND_EMAIL: answers.noContent() });
  // The development mailbox stays on (the suite's default): the hook wins over it.
  const svc = service({
    ...receiver.bindings,
    AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
    AUTH_OTP_EMAIL_ENABLED: "true",
  });

  it("the verification mail goes to the app with its template, locale, link and user; none to the mailbox", async () => {
    const email = uniqueEmail("hook-mail");
    const response = await svc.post("/signup/email-password", {
      email,
      password: PASSWORD,
      options: { locale: "en", redirectTo: "http://localhost:3000/welcome" },
    });
    expect(await response.json()).toEqual({ session: null });
    const [sent] = receiver.callsOf("SEND_EMAIL").filter((p) => p.to === email);
    expect(sent).toEqual({
      to: email,
      template: "email-verify",
      locale: "en",
      link: expect.stringMatching(/^http:\/\/localhost:8787\/auth\/v1\/verify\?ticket=/),
      user: expect.objectContaining({ email, emailVerified: false }),
      message: { subject: expect.any(String), text: expect.any(String), html: expect.any(String) },
    });
    expect(sent.message.text).toContain(sent.link);
    expect(receiver.unverified).toEqual([]);
    expect(await mailbox(svc, email)).toEqual([]);
    // The link the app mails works.
    const link = new URL(sent.link);
    const verified = await svc.request("GET", `${link.pathname.replace("/auth/v1", "")}${link.search}`);
    expect(verified.status).toBe(302);
    expect(await hookEvents(sent.user.id)).toEqual([
      { hook: "SEND_EMAIL", outcome: "sent", status: 204, ms: expect.any(Number) },
    ]);
  });

  it("a one-time code goes with its code and no link", async () => {
    const email = uniqueEmail("hook-otp");
    expect((await svc.post("/signin/otp/email", { email })).status).toBe(200);
    const [sent] = receiver.callsOf("SEND_EMAIL").filter((p) => p.to === email);
    expect(sent.template).toBe("signin-otp");
    expect(sent.code).toMatch(/^\d{6}$/);
    expect(sent.link).toBeUndefined();
    const signedIn = await svc.post("/signin/otp/email/verify", { email, otp: sent.code });
    expect(signedIn.status).toBe(200);
  });

  // Threat: a sign-up answered "check your inbox" while the mail went nowhere locks the person out of the account.
  it.each([
    ["answers 500", answers.status(500)],
    ["is unreachable", answers.unreachable()],
    ["times out", answers.timedOut()],
  ])(
    "when the hook %s: the sign-up answers 503 and is undone; a magic link answers 503",
    async (_, scenario) => {
      const failing = hookReceiver({ SEND_EMAIL: scenario });
      const down = service({ ...failing.bindings, AUTH_EMAIL_PASSWORDLESS_ENABLED: "true" });
      const email = uniqueEmail("hook-down");
      const response = await down.post("/signup/email-password", { email, password: PASSWORD });
      expect(response.headers.get("retry-after")).toBe("5");
      await expectError(response, 503, "service-unavailable");
      expect(await usersWithEmail(email)).toBe(0);
      expect(await mailbox(down, email)).toEqual([]);
      await expectError(
        await down.post("/signin/passwordless/email", { email: uniqueEmail("hook-down") }),
        503,
        "service-unavailable",
      );
    },
  );
});

describe("SEND_SMS", () => {
  const receiver = hookReceiver({ SEND_SMS: answers.json({ ok: true }) });
  // No provider and no development store: the hook alone is a transport that lets SMS sign-in start.
  const svc = service({ ...receiver.bindings, AUTH_SMS_PASSWORDLESS_ENABLED: "true" });

  it("the code goes to the app, signed, with the template, locale, code and user; the code signs in", async () => {
    const phoneNumber = uniquePhone();
    expect(await (await svc.post("/signin/passwordless/sms", { phoneNumber })).json()).toBe("OK");
    const [sent] = receiver.callsOf("SEND_SMS").filter((p) => p.to === phoneNumber);
    expect(sent).toEqual({
      to: phoneNumber,
      template: "signin-passwordless-sms",
      locale: "en",
      code: expect.stringMatching(/^\d{6}$/),
      user: expect.objectContaining({ phoneNumber }),
      message: { text: expect.stringContaining(sent.code) },
    });
    expect(receiver.unverified).toEqual([]);
    const signedIn = await svc.post("/signin/passwordless/sms/otp", { phoneNumber, otp: sent.code });
    expect(signedIn.status).toBe(200);
    const { session } = (await signedIn.json()) as { session: WireSession };
    expect(await hookEvents(session.user.id)).toEqual([
      { hook: "SEND_SMS", outcome: "sent", status: 200, ms: expect.any(Number) },
    ]);
  });

  it("the development store is not used when the hook is set", async () => {
    const both = hookReceiver({ SEND_SMS: answers.noContent() });
    const dev = service({ ...both.bindings, AUTH_SMS_PASSWORDLESS_ENABLED: "true", AUTH_DEV_SMS: "true" });
    const phoneNumber = uniquePhone();
    expect((await dev.post("/signin/passwordless/sms", { phoneNumber })).status).toBe(200);
    expect(both.callsOf("SEND_SMS")).toHaveLength(1);
    expect(await (await dev.get(`/dev/sms?to=${encodeURIComponent(phoneNumber)}`)).json()).toEqual([]);
  });

  it("a hook that fails: 503 service-unavailable, with Retry-After", async () => {
    const failing = hookReceiver({ SEND_SMS: answers.status(503) });
    const down = service({ ...failing.bindings, AUTH_SMS_PASSWORDLESS_ENABLED: "true" });
    const response = await down.post("/signin/passwordless/sms", { phoneNumber: uniquePhone() });
    expect(response.headers.get("retry-after")).toBe("5");
    await expectError(response, 503, "service-unavailable");
  });
});
