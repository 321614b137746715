// A limit that cannot be counted (its Rate Limiting binding or its RateLimiter object fails) fails closed with a clear
// 503 `service-unavailable` and Retry-After (contract §1 "Unavailable"), before anything behind it has run: no user,
// no mail, no 500. Threat: a platform fault turning into a way around the sign-up and guess limits, or into lost work.

import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ADDRESS_LIMITER_BINDINGS } from "../../src/rate-limits/buckets";
import { PUBLISHABLE_KEY, supabaseClient } from "../faces/supabase/support";
import { expectError, mailbox, NO_VERIFICATION, PASSWORD, service, signUp, uniqueEmail } from "../helpers";
import { uniquePhone } from "../support/phones";
import { allInShards } from "../support/shards";

const broken = () => Promise.reject(new Error("Durable Object reset because its code was updated"));
/** Every address limit allows, but `bucket`'s binding fails. */
const failing = (binding: string) => ({
  ...NO_VERIFICATION,
  AUTH_RATE_LIMIT_ENABLE: "true",
  AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
  ...Object.fromEntries(
    Object.values(ADDRESS_LIMITER_BINDINGS).map((name) => [name, { limit: async () => ({ success: true }) }]),
  ),
  [binding]: { limit: broken },
});

/** Users with `email`, in every shard. */
async function userCount(email: string): Promise<number> {
  const rows = await allInShards<{ n: number }>("SELECT count(*) AS n FROM users WHERE email = ?", email);
  return rows.reduce((sum, row) => sum + row.n, 0);
}

describe("a rate limit that cannot be counted", () => {
  // The sign-up count (src/http/sign-up-gate.ts) is the one that fails here: the flood guard and the mail count pass.
  const svc = service(failing("SIGNUPS_LIMITER"));

  it.each([
    ["/signup/email-password", (email: string) => ({ email, password: PASSWORD })],
    ["/signin/passwordless/email", (email: string) => ({ email })],
  ] as const)("%s: 503 service-unavailable with Retry-After; no user, no mail", async (path, body) => {
    const email = uniqueEmail("limiter-down");
    const answer = await svc.post(path, body(email));
    expect(answer.headers.get("retry-after")).toBe("5");
    await expectError(answer, 503, "service-unavailable");
    expect(await userCount(email)).toBe(0);
    expect(await mailbox(service(), email)).toEqual([]);
  });

  it("a sign-in's guess count, and the exact object behind an account's count: 503, nothing checked", async () => {
    const guesses = service(failing("BRUTE_FORCE_LIMITER"));
    const answer = await guesses.post("/signin/email-password", {
      email: uniqueEmail("down"),
      password: PASSWORD,
    });
    await expectError(answer, 503, "service-unavailable");
    const objectDown = service({
      ...failing("none"),
      RATE_LIMITERS: { idFromName: () => ({}), get: () => ({ hit: broken, peek: broken }) },
    });
    const email = uniqueEmail("object-down");
    await expectError(
      await objectDown.post("/signin/passwordless/email", { email }),
      503,
      "service-unavailable",
    );
    expect(await userCount(email)).toBe(0);
  });

  // Threat: the risk feature's velocity count (src/risk/velocity.ts, an object per address) failing open, letting a
  // right password through unscored, or half-way, with a session written and the answer lost.
  it("the risk velocity's object failing after a right password: 503, no session written", async () => {
    const email = uniqueEmail("velocity-down");
    const { user } = await signUp(service(NO_VERIFICATION), email);
    const real = env.RATE_LIMITERS;
    const velocityDown = service({
      ...failing("none"),
      // The account's own count answers; only the risk's counters (`RISK:…`) fail.
      RATE_LIMITERS: {
        idFromName: (name: string) => ({ name, id: real.idFromName(name) }),
        get: ({ name, id }: { name: string; id: DurableObjectId }) =>
          name.startsWith("RISK:") ? { hit: broken, peek: broken } : real.get(id),
      },
    });
    const answer = await velocityDown.request("POST", "/signin/email-password", {
      headers: { "cf-connecting-ip": "192.0.2.177", "content-type": "application/json" },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(answer.headers.get("retry-after"), `${answer.status} ${await answer.clone().text()}`).toBe("5");
    await expectError(answer, 503, "service-unavailable");
    // The sign-up's own session, and no second one.
    const sessions = await allInShards<{ n: number }>(
      "SELECT count(*) AS n FROM sessions WHERE user_id = ?",
      user.id,
    );
    expect(sessions.reduce((sum, row) => sum + row.n, 0)).toBe(1);
  });

  // Threat: the count on a phone factor's number (src/auth/second-step.ts) failing open, texting uncounted, or half-way,
  // leaving a second step's ticket nobody was sent a code for.
  it("the count on a phone factor's number failing at a sign-in's SMS step: 503, nothing texted, no ticket", async () => {
    const plain = service({ ...NO_VERIFICATION, AUTH_MFA_ENABLED: "true", AUTH_DEV_SMS: "true" });
    const face = service({
      ...NO_VERIFICATION,
      AUTH_MFA_ENABLED: "true",
      AUTH_DEV_SMS: "true",
      AUTH_SUPABASE_API_ENABLED: "true",
      AUTH_SUPABASE_PUBLISHABLE_KEYS: PUBLISHABLE_KEY,
    });
    const email = uniqueEmail("sms-count-down");
    const phone = uniquePhone();
    const texts = async () =>
      ((await (await plain.get(`/dev/sms?to=${encodeURIComponent(phone)}`)).json()) as { body: string }[])
        .length;
    // A verified phone factor, made through the face's mfa namespace with the limits off.
    const supabase = supabaseClient(face);
    await supabase.auth.signUp({ email, password: PASSWORD });
    const factorId = (await supabase.auth.mfa.enroll({ factorType: "phone", phone })).data!.id;
    const challengeId = (await supabase.auth.mfa.challenge({ factorId })).data!.id;
    const [sms] = (await (await plain.get(`/dev/sms?to=${encodeURIComponent(phone)}`)).json()) as {
      body: string;
    }[];
    const code = /\b(\d{6})\b/.exec(sms!.body)![1]!;
    expect((await supabase.auth.mfa.verify({ factorId, challengeId, code })).error).toBeNull();

    const real = env.RATE_LIMITERS;
    const smsCountDown = service({
      ...failing("none"),
      AUTH_MFA_ENABLED: "true",
      AUTH_DEV_SMS: "true",
      // The account's own counts answer; only the number's SMS count fails.
      RATE_LIMITERS: {
        idFromName: (name: string) => ({ name, id: real.idFromName(name) }),
        get: ({ name, id }: { name: string; id: DurableObjectId }) =>
          name.startsWith("SMS:") ? { hit: broken, peek: broken } : real.get(id),
      },
    });
    const before = await texts();
    const answer = await smsCountDown.post("/signin/email-password", { email, password: PASSWORD });
    expect(answer.headers.get("retry-after"), `${answer.status} ${await answer.clone().text()}`).toBe("5");
    await expectError(answer, 503, "service-unavailable");
    expect(await texts()).toBe(before);
    const tickets = await allInShards<{ n: number }>(
      "SELECT count(*) AS n FROM mfa_tickets WHERE user_id = (SELECT id FROM users WHERE email = ?)",
      email,
    );
    expect(tickets.reduce((sum, row) => sum + row.n, 0)).toBe(0);
    // The count back, the same sign-in gets its SMS step.
    expect(
      await (await plain.post("/signin/email-password", { email, password: PASSWORD })).json(),
    ).toMatchObject({
      mfa: { ticket: expect.stringMatching(/^mfaSms:/) },
    });
  });
});
