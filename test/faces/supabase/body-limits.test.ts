import { describe, expect, it } from "vitest";
import { ADDRESS_LIMITER_BINDINGS } from "../../../src/rate-limits/buckets";
import { mailbox, PASSWORD, uniqueAddress, uniqueEmail } from "../../helpers";
import { uniquePhone } from "../../support/phones";
import { FACE, PUBLISHABLE_KEY, SECRET_KEY, supabaseClient, supabaseService } from "./support";

/**
 * The Supabase face's limits keyed by the account the handler mails, texts or checks (contract §11: "per client IP
 * and, where an identifier exists, per email/phone/user"). The threat: a body naming two identifiers, or one the
 * route's limit does not read, so that the per-recipient count lands on a made-up value while the handler sends to
 * (or checks the code of) the real one. From many client addresses, that is an unmetered inbox or phone bomb, or
 * unmetered guesses at one account's mailed code. Each test comes from a new client address per request, so only the
 * per-account count can refuse, and the burst is 2: the third request to one account is the one refused.
 */

const LIMITS = {
  AUTH_RATE_LIMIT_ENABLE: "true",
  AUTH_RATE_LIMIT_EMAIL_BURST: "2",
  AUTH_RATE_LIMIT_SMS_BURST: "2",
  AUTH_RATE_LIMIT_BRUTE_FORCE_BURST: "2",
  AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
  AUTH_SMS_PASSWORDLESS_ENABLED: "true",
  AUTH_DEV_SMS: "true",
  AUTH_ANONYMOUS_USERS_ENABLED: "true",
  AUTH_MFA_ENABLED: "true",
};
const svc = supabaseService(LIMITS);

/** Without its `+`, as supabase-js takes a number. */
const localPhone = () => uniquePhone().slice(1);

const post = (path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  svc.request("POST", `${FACE}/auth/v1${path}`, {
    headers: {
      apikey: PUBLISHABLE_KEY,
      "content-type": "application/json",
      "cf-connecting-ip": uniqueAddress(),
      ...headers,
    },
    body: JSON.stringify(body),
  });

async function texts(phone: string, on = svc): Promise<unknown[]> {
  return (await (await on.get(`/dev/sms?to=${encodeURIComponent(`+${phone}`)}`)).json()) as unknown[];
}

describe("a body naming an email and a phone is counted on the one the handler uses", () => {
  it("/otp mails the email: a fresh phone each time does not buy the address a fresh window", async () => {
    const victim = uniqueEmail("sb-otp-bomb");
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await post("/otp", { email: victim, phone: localPhone() })).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect(await mailbox(svc, victim)).toHaveLength(2);
  });

  it("/resend of a sign-up confirmation is counted on its email, whatever phone rides along", async () => {
    const victim = uniqueEmail("sb-resend-bomb");
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push((await post("/resend", { type: "signup", email: victim, phone: localPhone() })).status);
    }
    expect(statuses).toEqual([200, 200, 429]);
  });

  it("/verify of a mailed code is counted on its email: guesses with a fresh phone each are still refused", async () => {
    const email = uniqueEmail("sb-verify-guess");
    expect((await post("/otp", { email })).status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const guess = String(100_000 + i);
      statuses.push(
        (await post("/verify", { type: "email", email, token: guess, phone: localPhone() })).status,
      );
    }
    expect(statuses.slice(0, 2)).not.toContain(429);
    expect(statuses[2]).toBe(429);
  });

  it("/verify of a texted code is counted on its number, written with or without its +", async () => {
    const phone = localPhone();
    const statuses: number[] = [];
    for (const written of [phone, `+${phone}`, phone]) {
      statuses.push((await post("/verify", { type: "sms", phone: written, token: "123456" })).status);
    }
    expect(statuses.slice(0, 2)).not.toContain(429);
    expect(statuses[2]).toBe(429);
  });
});

describe("signUp by phone is an SMS to the number", () => {
  it("counted per number in the SMS bucket, not per client address alone", async () => {
    const phone = localPhone();
    const statuses: number[] = [];
    for (const written of [phone, `+${phone}`, phone]) {
      statuses.push((await post("/signup", { phone: written, password: PASSWORD })).status);
    }
    expect(statuses[2]).toBe(429);
    expect((await texts(phone)).length).toBeLessThanOrEqual(2);
  });

  it("an anonymous sign-in sends nothing and counts in no send's bucket, as the Nhost API's", async () => {
    // The address counts in the limiter objects, at the burst of 2 above, rather than in the platform's bindings.
    const exact = supabaseService({
      ...LIMITS,
      ...Object.fromEntries(Object.values(ADDRESS_LIMITER_BINDINGS).map((name) => [name, undefined])),
    });
    const address = uniqueAddress();
    const signUp = () =>
      exact.request("POST", `${FACE}/auth/v1/signup`, {
        headers: { apikey: PUBLISHABLE_KEY, "content-type": "application/json", "cf-connecting-ip": address },
        body: "{}",
      });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await signUp()).status);
    expect(statuses).toEqual([200, 200, 200]);
  });
});

describe("updateUser's changes are sends to the new address or number", () => {
  async function signedIn(): Promise<string> {
    const email = uniqueEmail("sb-changer");
    const supabase = supabaseClient(svc, undefined, { "cf-connecting-ip": uniqueAddress() });
    await supabase.auth.signUp({ email, password: PASSWORD });
    const { data } = await supabase.auth.signInWithPassword({ email, password: PASSWORD });
    return data.session!.access_token;
  }
  const put = (token: string, body: Record<string, unknown>) =>
    svc.request("PUT", `${FACE}/auth/v1/user`, {
      headers: {
        apikey: PUBLISHABLE_KEY,
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        "cf-connecting-ip": uniqueAddress(),
      },
      body: JSON.stringify(body),
    });

  it("an email change is counted on the new address: three accounts cannot mail one inbox a third time", async () => {
    const victim = uniqueEmail("sb-change-bomb");
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await put(await signedIn(), { email: victim })).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect(await mailbox(svc, victim)).toHaveLength(2);
  });

  it("a change refused for want of a reauthentication code sends nothing and counts nothing", async () => {
    // Threat: the recipient's own count spent by requests that never mail it, so its owner's next mail is refused.
    const proving = supabaseService({ ...LIMITS, AUTH_REQUIRE_ELEVATED_CLAIM: "required" });
    const email = uniqueEmail("sb-unproven");
    const supabase = supabaseClient(proving, undefined, { "cf-connecting-ip": uniqueAddress() });
    await supabase.auth.signUp({ email, password: PASSWORD });
    const { data } = await supabase.auth.signInWithPassword({ email, password: PASSWORD });
    const victim = uniqueEmail("sb-unproven-target");
    for (let i = 0; i < 3; i++) {
      const refused = await proving.request("PUT", `${FACE}/auth/v1/user`, {
        headers: {
          apikey: PUBLISHABLE_KEY,
          authorization: `Bearer ${data.session!.access_token}`,
          "content-type": "application/json",
          "cf-connecting-ip": uniqueAddress(),
        },
        body: JSON.stringify({ email: victim }),
      });
      expect(refused.status).toBe(400);
    }
    const statuses: number[] = [];
    for (let i = 0; i < 2; i++) statuses.push((await post("/otp", { email: victim })).status);
    expect(statuses).toEqual([200, 200]);
  });

  it("a phone change is counted on the new number, however it is written", async () => {
    const phone = localPhone();
    const statuses: number[] = [];
    for (const written of [phone, `+${phone}`, phone]) {
      statuses.push((await put(await signedIn(), { phone: written })).status);
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(await texts(phone)).toHaveLength(2);
  });
});

describe("a phone factor's texts are counted on its number", () => {
  // The number is whatever the account typed, unproven until its first code: a stranger's, enrolled on accounts of
  // one's own and challenged from many addresses, or the owner's, texted at every sign-in by whoever holds the password.
  const client = (on = svc) => supabaseClient(on, undefined, { "cf-connecting-ip": uniqueAddress() });
  async function enrolled(phone: string, on = svc) {
    const supabase = client(on);
    const email = uniqueEmail("sb-factor");
    await supabase.auth.signUp({ email, password: PASSWORD });
    const { data } = await supabase.auth.mfa.enroll({ factorType: "phone", phone });
    return { supabase, email, factorId: data!.id };
  }

  it("three accounts enrolling one number: its third challenge is refused, and nothing is texted", async () => {
    const phone = `+${localPhone()}`;
    const statuses: (number | undefined)[] = [];
    for (let i = 0; i < 3; i++) {
      const { supabase, factorId } = await enrolled(phone);
      const challenge = await supabase.auth.mfa.challenge({ factorId });
      statuses.push(challenge.error ? challenge.error.status : 200);
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(await texts(phone.slice(1))).toHaveLength(2);
  });

  it("a sign-in's SMS step counts on the factor's number: past the burst, 429 and nothing texted", async () => {
    // The account's own password limit above the SMS burst, so that only the texts can refuse.
    const roomy = supabaseService({ ...LIMITS, AUTH_RATE_LIMIT_BRUTE_FORCE_BURST: "10" });
    const phone = `+${localPhone()}`;
    const { supabase, email, factorId } = await enrolled(phone, roomy);
    const challenge = await supabase.auth.mfa.challenge({ factorId });
    const [text] = (await (await roomy.get(`/dev/sms?to=${encodeURIComponent(phone)}`)).json()) as {
      body: string;
    }[];
    const code = /\b(\d{6})\b/.exec(text!.body)![1]!;
    expect(
      (await supabase.auth.mfa.verify({ factorId, challengeId: challenge.data!.id, code })).error,
    ).toBeNull();

    const signIn = () =>
      roomy.request("POST", "/signin/email-password", {
        headers: { "content-type": "application/json", "cf-connecting-ip": uniqueAddress() },
        body: JSON.stringify({ email, password: PASSWORD }),
      });
    const first = await signIn();
    expect(await first.json()).toMatchObject({
      session: null,
      mfa: { ticket: expect.stringMatching(/^mfaSms:/) },
    });
    const second = await signIn();
    expect(second.status).toBe(429);
    expect(await second.json()).toMatchObject({ error: "too-many-requests" });
    expect(await texts(phone.slice(1), roomy)).toHaveLength(2);
  });
});

describe("reauthenticate's code is a send to the account's own address", () => {
  // A session can ask from any client address; the route counts the address, the code's mail counts its recipient.
  it("counted on the address it mails: the third code in the window is refused", async () => {
    const email = uniqueEmail("sb-reauth");
    const admin = supabaseClient(svc, SECRET_KEY);
    expect(
      (await admin.auth.admin.createUser({ email, password: PASSWORD, email_confirm: true })).error,
    ).toBeNull();
    const { data } = await supabaseClient(svc).auth.signInWithPassword({ email, password: PASSWORD });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await svc.request("GET", `${FACE}/auth/v1/reauthenticate`, {
        headers: {
          apikey: PUBLISHABLE_KEY,
          authorization: `Bearer ${data.session!.access_token}`,
          "cf-connecting-ip": uniqueAddress(),
        },
      });
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(await mailbox(svc, email)).toHaveLength(2);
  });
});
