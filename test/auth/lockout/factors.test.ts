// The lockout of the guessable factors other than the password (contract §13, docs/protection.md "Lockout"): TOTP
// codes, recovery codes, email and SMS one-time codes. Threats: a guesser who holds the password working through TOTP
// codes on fresh tickets (each ticket's cap and the GuessGuard's free guesses are per ticket and per burst; the
// lockout is per hour); codes asked for again and again, each with its own 5 tries, adding up to unbounded guesses.
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { afterEach, describe, expect, it, vi } from "vitest";
import { totpCode, totpStep } from "../../../src/auth/mfa/totp";
import {
  expectError,
  mailbox,
  NO_VERIFICATION,
  PASSWORD,
  service,
  sessionFromRefresh,
  signUp,
  uniqueEmail,
  type WireSession,
} from "../../helpers";
import { uniquePhone } from "../../support/phones";
import { userD1 } from "../../support/shards";

const svc = service({
  ...NO_VERIFICATION,
  AUTH_MFA_ENABLED: "true",
  AUTH_OTP_EMAIL_ENABLED: "true",
  AUTH_SMS_PASSWORDLESS_ENABLED: "true",
  AUTH_DEV_SMS: "true",
});
const THRESHOLD = 10;

afterEach(() => {
  vi.useRealTimers();
});

/** The server's clock (the same isolate's `Date`) set to `at`. */
function clockAt(at: number) {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(at);
}

const codeAt = (secret: Uint8Array) => totpCode(secret, totpStep(Date.now()));
const wrongTotp = (secret: Uint8Array) => String((Number(codeAt(secret)) + 7) % 1_000_000).padStart(6, "0");
const wrongOtp = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

/** A user with TOTP active and recovery codes, whose last accepted TOTP step is forgotten. */
async function userWithTotp() {
  const email = uniqueEmail("totp");
  const session = await signUp(svc, email);
  const generated = await svc.get("/mfa/totp/generate", session.accessToken);
  const secret = decodeBase32IgnorePadding(((await generated.json()) as { totpSecret: string }).totpSecret);
  const on = await svc.post(
    "/user/mfa",
    { code: codeAt(secret), activeMfaType: "totp" },
    session.accessToken,
  );
  expect(on.status).toBe(200);
  await forgetLastStep(session.user.id);
  const made = await svc.post("/mfa/recovery-codes", { code: codeAt(secret) }, session.accessToken);
  const { recoveryCodes } = (await made.json()) as { recoveryCodes: string[] };
  await forgetLastStep(session.user.id);
  return { email, secret, session, recoveryCodes };
}

const forgetLastStep = (userId: string) =>
  userD1(userId).prepare("UPDATE users SET totp_last_step = NULL WHERE id = ?").bind(userId).run();

async function mfaTicket(email: string): Promise<string> {
  const response = await svc.post("/signin/email-password", { email, password: PASSWORD });
  return ((await response.json()) as { mfa: { ticket: string } }).mfa.ticket;
}

const verifyTotp = (ticket: string, otp: string) => svc.post("/signin/mfa/totp", { ticket, otp });

const lockMails = async (email: string) =>
  (await mailbox(svc, email)).filter((mail) => mail.text.includes("/unlock?ticket="));

describe("second-factor lockout", () => {
  // Ten wrong codes, each through a fresh ticket, waiting out the GuessGuard's short locks (30 s doubling) in between:
  // ~2 s of sign-ins on a quiet machine, more on a busy one.
  it.each([
    ["totp", (secret: Uint8Array) => wrongTotp(secret), "a code from your authenticator app"],
    ["recovery-code", () => "zzzzz-zzzzz", "a recovery code"],
  ] as const)(
    "ten wrong %s guesses within the hour lock it, the right one refused",
    async (factor, wrong, words) => {
      let now = Date.now();
      clockAt(now);
      const { email, secret, session, recoveryCodes } = await userWithTotp();
      for (let i = 0; i < THRESHOLD; i++) {
        await expectError(await verifyTotp(await mfaTicket(email), wrong(secret)), 401, "invalid-totp");
        // Past the GuessGuard's free guesses, its lock (at most 8 minutes here) is waited out: the lockout's hour is not.
        if (i >= 4) {
          now += 9 * 60_000;
          clockAt(now);
        }
      }
      const right = factor === "totp" ? codeAt(secret) : recoveryCodes[0]!;
      const locked = await verifyTotp(await mfaTicket(email), right);
      expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
      await expectError(locked, 429, "account-locked");
      // The account page's checks of the same factor are locked too (with a token fresh at the moved clock).
      const { accessToken } = await sessionFromRefresh(svc, session.refreshToken);
      await expectError(await svc.post("/user/mfa", { code: right }, accessToken), 429, "account-locked");
      const [mail] = await lockMails(email);
      expect(mail!.text).toContain(`with ${words}, so signing in that way is paused for 15 minutes`);
    },
    60_000,
  );
});

describe("one-time code lockout", () => {
  // Threat: a new code every five guesses; each code's own cap never adds up to a lock.
  it("email codes: ten wrong ones over two codes lock the factor; a third, right code is refused", async () => {
    const email = uniqueEmail("otp");
    const requestCode = async () => {
      expect((await svc.post("/signin/otp/email", { email })).status).toBe(200);
      const mail = (await mailbox(svc, email)).find((m) => m.subject === "Your sign-in code");
      return /\b(\d{6})\b/.exec(mail!.text)![1]!;
    };
    const verify = (otp: string) => svc.post("/signin/otp/email/verify", { email, otp });
    for (let round = 0; round < 2; round++) {
      const code = await requestCode();
      for (let i = 0; i < 5; i++) await expectError(await verify(wrongOtp(code)), 400, "invalid-otp");
    }
    await expectError(await verify(await requestCode()), 429, "account-locked");
    const [mail] = await lockMails(email);
    expect(mail!.text).toContain("with a code sent by email, so signing in that way is paused");
  }, 30_000);

  it("SMS codes: the same, for a number (no mail: the account has no address)", async () => {
    const phoneNumber = uniquePhone();
    const requestCode = async () => {
      expect((await svc.post("/signin/passwordless/sms", { phoneNumber })).status).toBe(200);
      const [sms] = (await (await svc.get(`/dev/sms?to=${encodeURIComponent(phoneNumber)}`)).json()) as {
        body: string;
      }[];
      return /\b(\d{6})\b/.exec(sms!.body)![1]!;
    };
    const verify = (otp: string) => svc.post("/signin/passwordless/sms/otp", { phoneNumber, otp });
    for (let round = 0; round < 2; round++) {
      const code = await requestCode();
      for (let i = 0; i < 5; i++) await expectError(await verify(wrongOtp(code)), 400, "invalid-otp");
    }
    await expectError(await verify(await requestCode()), 429, "account-locked");
    // The password of another account is not affected by this number's lock.
    const other: WireSession = await signUp(svc);
    expect(
      (await svc.post("/signin/email-password", { email: other.user.email, password: PASSWORD })).status,
    ).toBe(200);
  }, 30_000);
});
