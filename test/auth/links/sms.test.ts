import { env } from "cloudflare:test";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../../src/auth/mfa/totp";
import { expectError, service, type WireSession } from "../../helpers";
import { eachStatementFailingOnce } from "../../support/faults";
import { uniquePhone } from "../../support/phones";

const svc = service({
  AUTH_SMS_PASSWORDLESS_ENABLED: "true",
  AUTH_DEV_SMS: "true",
  AUTH_MFA_ENABLED: "true",
});

async function devSms(to: string): Promise<{ to: string; body: string }[]> {
  const response = await svc.get(`/dev/sms?to=${encodeURIComponent(to)}`);
  expect(response.status).toBe(200);
  return (await response.json()) as { to: string; body: string }[];
}

async function requestCode(phoneNumber: string, options?: unknown): Promise<string> {
  expect(await (await svc.post("/signin/passwordless/sms", { phoneNumber, options })).json()).toBe("OK");
  const [sms] = await devSms(phoneNumber);
  return /\b(\d{6})\b/.exec(sms!.body)![1]!;
}

const verify = (phoneNumber: string, otp: string) =>
  svc.post("/signin/passwordless/sms/otp", { phoneNumber, otp });
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

describe("SMS sign-in (development transport)", () => {
  it("texts a code that signs in a new user with a verified E.164 number; the next time finds the same user", async () => {
    const phone = uniquePhone();
    const spaced = `${phone.slice(0, 2)} ${phone.slice(2, 5)} ${phone.slice(5, 8)} ${phone.slice(8)}`;
    const code = await requestCode(spaced);
    const [sms] = await devSms(phone);
    expect(sms!.to).toBe(phone);
    expect(sms!.body).toBe(`Your sign-in code is ${code}. It is valid for 5 minutes.`);

    const response = await verify(phone, code);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { session: WireSession; mfa: null };
    expect(body.mfa).toBeNull();
    expect(body.session.user).toMatchObject({
      phoneNumber: phone,
      phoneNumberVerified: true,
      displayName: phone,
    });
    await expectError(await verify(phone, code), 400, "invalid-otp");

    const again = await verify(phone, await requestCode(phone));
    expect(((await again.json()) as { session: WireSession }).session.user.id).toBe(body.session.user.id);
  });

  it("POST /signup/passwordless/sms (client.md §15) creates the user and texts the code; a taken number is 409", async () => {
    const phone = uniquePhone();
    const signUp = await svc.post("/signup/passwordless/sms", {
      phoneNumber: phone,
      options: { displayName: "Sam", metadata: { plan: "free" } },
    });
    expect(await signUp.json()).toBe("OK");
    const [sms] = await devSms(phone);
    const code = /\b(\d{6})\b/.exec(sms!.body)![1]!;
    const signedIn = (await (await verify(phone, code)).json()) as { session: WireSession };
    expect(signedIn.session.user).toMatchObject({
      phoneNumber: phone,
      phoneNumberVerified: true,
      displayName: "Sam",
      metadata: { plan: "free" },
    });
    const again = await svc.post("/signup/passwordless/sms", { phoneNumber: phone });
    expect(await expectError(again, 409, "phone-number-already-in-use")).toMatchObject({
      message: "phone number already in use",
    });
    expect(await devSms(phone)).toHaveLength(1);
    // The switch, the number check and the concealment apply as to the sign-in variant.
    await expectError(
      await service().post("/signup/passwordless/sms", { phoneNumber: uniquePhone() }),
      409,
      "disabled-endpoint",
    );
    await expectError(
      await svc.post("/signup/passwordless/sms", { phoneNumber: "12345" }),
      400,
      "invalid-request",
    );
    const concealed = service({
      AUTH_SMS_PASSWORDLESS_ENABLED: "true",
      AUTH_DEV_SMS: "true",
      AUTH_CONCEAL_ERRORS: "true",
    });
    await expectError(
      await concealed.post("/signup/passwordless/sms", { phoneNumber: phone }),
      400,
      "invalid-request",
    );
  });

  it("texts in the user's locale", async () => {
    const french = service({
      AUTH_SMS_PASSWORDLESS_ENABLED: "true",
      AUTH_DEV_SMS: "true",
      AUTH_LOCALE_ALLOWED_LOCALES: "en,fr",
    });
    const phone = uniquePhone();
    await french.post("/signin/passwordless/sms", { phoneNumber: phone, options: { locale: "fr" } });
    expect((await devSms(phone))[0]!.body).toMatch(/^Votre code de connexion est \d{6}\./);
  });

  it("after 5 wrong tries the code is dead; parallel guesses do not exceed the cap", async () => {
    // The code's own cap: the account's lockout (test/auth/lockout/), which these 17 wrong codes would reach, is set
    // out of the way.
    const loose = service({
      AUTH_SMS_PASSWORDLESS_ENABLED: "true",
      AUTH_DEV_SMS: "true",
      AUTH_LOCKOUT_THRESHOLD: "100",
    });
    const guess = (phoneNumber: string, otp: string) =>
      loose.post("/signin/passwordless/sms/otp", { phoneNumber, otp });
    const phone = uniquePhone();
    const code = await requestCode(phone);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        guess(phone, String((Number(code) + 1 + i) % 1_000_000).padStart(6, "0")),
      ),
    );
    expect(answers.every((r) => r.status === 400)).toBe(true);
    await expectError(await guess(phone, code), 400, "invalid-otp");
    const fresh = await requestCode(phone);
    for (let i = 0; i < 4; i++) await guess(phone, wrong(fresh));
    expect((await guess(phone, fresh)).status).toBe(200);
  });

  it("with TOTP active the code is only the first factor: an mfa ticket, then the TOTP code", async () => {
    const phone = uniquePhone();
    const first = (await (await verify(phone, await requestCode(phone))).json()) as { session: WireSession };
    const token = first.session.accessToken;
    const { totpSecret } = (await (await svc.get("/mfa/totp/generate", token)).json()) as {
      totpSecret: string;
    };
    const secret = decodeBase32IgnorePadding(totpSecret);
    const step = totpStep(Date.now());
    expect(
      (await svc.post("/user/mfa", { code: totpCode(secret, step), activeMfaType: "totp" }, token)).status,
    ).toBe(200);
    const second = (await (await verify(phone, await requestCode(phone))).json()) as {
      session: null;
      mfa: { ticket: string };
    };
    expect(second.session).toBeNull();
    const completed = await svc.post("/signin/mfa/totp", {
      ticket: second.mfa.ticket,
      otp: totpCode(secret, step + 1n),
    });
    expect(((await completed.json()) as { session: WireSession }).session.user.phoneNumber).toBe(phone);
  });

  it("refuses bad numbers, and answers 409 when off; with sign-up off a new number gets OK and no SMS", async () => {
    for (const phoneNumber of ["12345", "+1 415", "not a number", "+999 1234567"]) {
      await expectError(await svc.post("/signin/passwordless/sms", { phoneNumber }), 400, "invalid-request");
    }
    await expectError(await verify("+1415", "123456"), 400, "invalid-request");
    await expectError(await verify(uniquePhone(), "123456"), 400, "invalid-otp");
    await expectError(
      await service().post("/signin/passwordless/sms", { phoneNumber: uniquePhone() }),
      409,
      "disabled-endpoint",
    );
    const closed = service({
      AUTH_SMS_PASSWORDLESS_ENABLED: "true",
      AUTH_DEV_SMS: "true",
      AUTH_DISABLE_SIGNUP: "true",
    });
    // Threat: enumeration. A 403 for unknown numbers only would tell which numbers have accounts.
    const unknown = uniquePhone();
    const answer = await closed.post("/signin/passwordless/sms", { phoneNumber: unknown });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toBe("OK");
    expect(await devSms(unknown)).toHaveLength(0);
    await expectError(
      await closed.post("/signup/passwordless/sms", { phoneNumber: uniquePhone() }),
      403,
      "signup-disabled",
    );
  });

  it("the development SMS list exists only with AUTH_DEV_SMS", async () => {
    await expectError(await service().get("/dev/sms?to=%2B14155550100"), 404, "route-not-found");
  });
});

describe("SMS sign-in through Twilio", () => {
  const TWILIO_ENV = {
    AUTH_SMS_PASSWORDLESS_ENABLED: "true",
    AUTH_SMS_PROVIDER: "twilio",
    AUTH_SMS_TWILIO_ACCOUNT_SID: "ACtest",
    AUTH_SMS_TWILIO_AUTH_TOKEN: "twilio-token",
    AUTH_SMS_TWILIO_MESSAGING_SERVICE_ID: "MGservice",
  };
  const twilio = service(TWILIO_ENV);

  async function sentByTwilio(to: string): Promise<Record<string, string>[]> {
    const response = await env.OUTBOUND!.fetch(`https://api.twilio.com/__sent?to=${encodeURIComponent(to)}`);
    return (await response.json()) as Record<string, string>[];
  }

  it("posts the message to Twilio's Messages API with the messaging service; its code signs in", async () => {
    const phone = uniquePhone();
    expect(await (await twilio.post("/signin/passwordless/sms", { phoneNumber: phone })).json()).toBe("OK");
    const [message] = await sentByTwilio(phone);
    expect(message).toMatchObject({ To: phone, MessagingServiceSid: "MGservice" });
    const code = /\b(\d{6})\b/.exec(message!.Body!)![1]!;
    expect(
      (await twilio.post("/signin/passwordless/sms/otp", { phoneNumber: phone, otp: code })).status,
    ).toBe(200);
  });

  it("sends from a number when the sender is one", async () => {
    const fromNumber = service({ ...TWILIO_ENV, AUTH_SMS_TWILIO_MESSAGING_SERVICE_ID: "+14155550199" });
    const phone = uniquePhone();
    await fromNumber.post("/signin/passwordless/sms", { phoneNumber: phone });
    expect((await sentByTwilio(phone))[0]).toMatchObject({ To: phone, From: "+14155550199" });
  });

  it("a refusal by the provider is 400 cannot-send-sms", async () => {
    await expectError(
      await twilio.post("/signin/passwordless/sms", { phoneNumber: "+15005550001" }),
      400,
      "cannot-send-sms",
    );
    const badToken = service({ ...TWILIO_ENV, AUTH_SMS_TWILIO_AUTH_TOKEN: "wrong" });
    await expectError(
      await badToken.post("/signin/passwordless/sms", { phoneNumber: uniquePhone() }),
      400,
      "cannot-send-sms",
    );
  });
});

describe("POST /signin/passwordless/sms/otp with D1 failing once at each statement", () => {
  // Threat: a fault after the texted code was redeemed in its object (the number's proof, the session's reads and
  // batch) answered 503 with the code spent: the retry answered invalid-otp, and a new code is another paid text.
  it("a session, or a 503 whose retry with the same code signs in; the code spent afterwards", async () => {
    const settings = {
      AUTH_SMS_PASSWORDLESS_ENABLED: "true",
      AUTH_DEV_SMS: "true",
      AUTH_MFA_ENABLED: "true",
    };
    const signIn = (through: ReturnType<typeof service>, phoneNumber: string, otp: string) =>
      through.post("/signin/passwordless/sms/otp", { phoneNumber, otp });
    let faults = 0;
    await eachStatementFailingOnce(
      env,
      async (bindings) => {
        const phoneNumber = uniquePhone();
        const otp = await requestCode(phoneNumber);
        expect((await signIn(service({ ...settings, ...bindings }), phoneNumber, otp)).status).toBe(200);
      },
      async (bindings, context) => {
        const failing = service({ ...settings, ...bindings });
        const phoneNumber = uniquePhone();
        const code = await requestCode(phoneNumber);
        const answer = await signIn(failing, phoneNumber, code);
        if (answer.status !== 200) {
          expect(answer.status, `${context}: ${await answer.text()}`).toBe(503);
          faults++;
          const retry = await signIn(failing, phoneNumber, code);
          expect(retry.status, `${context}: ${await retry.clone().text()}`).toBe(200);
        }
        await expectError(await verify(phoneNumber, code), 400, "invalid-otp");
      },
    );
    expect(faults).toBeGreaterThan(1);
  }, 60_000);
});
