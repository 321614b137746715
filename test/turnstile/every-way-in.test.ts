// Every way a user can come to exist meets the same sign-up checks (contract §9, src/http/sign-up-gate.ts): Turnstile's
// `signup` challenge and the `SIGNUPS` count per address. A review found accounts created with neither by magic links,
// email and SMS codes to new addresses, anonymous sign-in then deanonymize, and the built-in page's email-link form.
// Threat for all of them: scripted mass account creation (and SMS pumping: each code sent to a new number costs money).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ADDRESS_LIMITER_BINDINGS } from "../../src/rate-limits/buckets";
import { expectError, NO_VERIFICATION, PASSWORD, service, uniqueAddress, uniqueEmail } from "../helpers";
import { Browser } from "../oauth2/page-browser";
import { authorize, newClient, provider, requestIdOf } from "../oauth2/support";
import { FAKE_PROVIDERS, location as redirectedTo, startAt as startProvider } from "../providers/support";
import { uniquePhone } from "../support/phones";
import { allInShards } from "../support/shards";

const SITEVERIFY = "https://turnstile.fake/siteverify";
const GUARDED = {
  ...NO_VERIFICATION,
  AUTH_TURNSTILE_SECRET: "turnstile-secret",
  AUTH_TURNSTILE_VERIFY_URL: SITEVERIFY,
  AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
  AUTH_OTP_EMAIL_ENABLED: "true",
  AUTH_SMS_PASSWORDLESS_ENABLED: "true",
  AUTH_DEV_SMS: "true",
  AUTH_ANONYMOUS_USERS_ENABLED: "true",
};

/** A token the fake siteverify accepts once, solved for `action`. */
const solved = (action = "signup") => `pass:localhost:${action}:${crypto.randomUUID()}`;

/** Users with `value` in `column`, in every shard. */
async function userCount(column: "email" | "phone_number", value: string): Promise<number> {
  const rows = await allInShards<{ n: number }>(`SELECT count(*) AS n FROM users WHERE ${column} = ?`, value);
  return rows.reduce((sum, row) => sum + row.n, 0);
}

function post(
  svc: ReturnType<typeof service>,
  path: string,
  json: unknown,
  extra: Record<string, string> = {},
) {
  return svc.request("POST", path, { json, headers: { "cf-connecting-ip": "198.51.100.28", ...extra } });
}

describe("the sign-up challenge guards every request that can create a user", () => {
  const svc = service(GUARDED);

  it.each([
    "/signin/passwordless/email",
    "/signin/otp/email",
    "/signup/passwordless/email",
    "/signup/otp/email",
  ])(
    "%s: no token, no account and no mail; a token solved for signup or passwordless passes",
    async (path) => {
      const email = uniqueEmail("way-in");
      await expectError(await post(svc, path, { email }), 400, "turnstile-required");
      expect(await userCount("email", email)).toBe(0);
      const inbox = (await (
        await svc.get(`/dev/mailbox?to=${encodeURIComponent(email)}`)
      ).json()) as unknown[];
      expect(inbox).toEqual([]);
      expect(
        (await post(svc, path, { email }, { "x-cf-turnstile-response": solved("passwordless") })).status,
      ).toBe(200);
      expect(await userCount("email", email)).toBe(1);
      // A token solved for another form (signin) is not one of this request's.
      const other = uniqueEmail("way-in");
      const wrong = await post(svc, path, { email: other }, { "x-cf-turnstile-response": solved("signin") });
      await expectError(wrong, 403, "turnstile-failed");
      expect((await post(svc, path, { email: other }, { "x-cf-turnstile-response": solved() })).status).toBe(
        200,
      );
    },
  );

  // Threat: enumeration. Were only new addresses challenged, a missing challenge would tell who has an account.
  it("a known address is challenged the same way, so the answer tells nothing", async () => {
    const email = uniqueEmail("known");
    expect(
      (
        await post(
          svc,
          "/signup/email-password",
          { email, password: PASSWORD },
          { "x-cf-turnstile-response": solved() },
        )
      ).status,
    ).toBe(200);
    for (const path of ["/signin/passwordless/email", "/signin/otp/email"]) {
      await expectError(await post(svc, path, { email }), 400, "turnstile-required");
    }
  });

  // Threat: SMS pumping. A text to a new number costs the deployment money before anyone signs in.
  it("/signin/passwordless/sms to a new number: no token, no user and no SMS", async () => {
    const phoneNumber = uniquePhone();
    await expectError(
      await post(svc, "/signin/passwordless/sms", { phoneNumber }),
      400,
      "turnstile-required",
    );
    expect(await userCount("phone_number", phoneNumber)).toBe(0);
    const sent = (await (
      await svc.get(`/dev/sms?to=${encodeURIComponent(phoneNumber)}`)
    ).json()) as unknown[];
    expect(sent).toEqual([]);
    const passed = await post(
      svc,
      "/signin/passwordless/sms",
      { phoneNumber },
      { "x-cf-turnstile-response": solved() },
    );
    expect(passed.status).toBe(200);
    expect(await userCount("phone_number", phoneNumber)).toBe(1);
  });

  it("anonymous sign-in, then deanonymize: each is challenged", async () => {
    await expectError(await post(svc, "/signin/anonymous", {}), 400, "turnstile-required");
    const anonymous = await post(svc, "/signin/anonymous", {}, { "x-cf-turnstile-response": solved() });
    expect(anonymous.status).toBe(200);
    const { session } = (await anonymous.json()) as { session: { accessToken: string } };
    const email = uniqueEmail("deanonymized");
    const body = { signInMethod: "email-password", email, password: PASSWORD };
    const refused = await svc.request("POST", "/user/deanonymize", {
      json: body,
      token: session.accessToken,
    });
    await expectError(refused, 400, "turnstile-required");
    expect(await userCount("email", email)).toBe(0);
    const passed = await svc.request("POST", "/user/deanonymize", {
      json: body,
      token: session.accessToken,
      headers: { "x-cf-turnstile-response": solved() },
    });
    expect(passed.status).toBe(200);
    expect(await userCount("email", email)).toBe(1);
  });

  it("with sign-ups off the sends create nobody, so only their own name (passwordless) guards them", async () => {
    const off = service({ ...GUARDED, AUTH_DISABLE_SIGNUP: "true" });
    expect((await post(off, "/signin/passwordless/email", { email: uniqueEmail("off") })).status).toBe(200);
    const both = service({
      ...GUARDED,
      AUTH_DISABLE_SIGNUP: "true",
      AUTH_TURNSTILE_ENDPOINTS: "signup,passwordless",
    });
    await expectError(
      await post(both, "/signin/passwordless/email", { email: uniqueEmail("off") }),
      400,
      "turnstile-required",
    );
  });
});

describe("the sign-up rate limit counts every way in", () => {
  // Exact counts in the RateLimiter object (no Rate Limiting binding), two sign-ups per address.
  const limited = service({
    ...NO_VERIFICATION,
    ...Object.fromEntries(Object.values(ADDRESS_LIMITER_BINDINGS).map((name) => [name, undefined])),
    AUTH_RATE_LIMIT_ENABLE: "true",
    AUTH_RATE_LIMIT_SIGNUPS_BURST: "2",
    AUTH_RATE_LIMIT_EMAIL_BURST: "100",
    AUTH_RATE_LIMIT_SMS_BURST: "100",
    AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
    AUTH_OTP_EMAIL_ENABLED: "true",
    AUTH_SMS_PASSWORDLESS_ENABLED: "true",
    AUTH_DEV_SMS: "true",
    AUTH_ANONYMOUS_USERS_ENABLED: "true",
  });

  it.each([
    ["/signin/passwordless/email", () => ({ email: uniqueEmail("flood") })],
    ["/signin/otp/email", () => ({ email: uniqueEmail("flood") })],
    ["/signin/passwordless/sms", () => ({ phoneNumber: uniquePhone() })],
    ["/signin/anonymous", () => ({})],
  ] as const)("%s: the third from one address is refused with the SIGNUPS bucket", async (path, body) => {
    const address = uniqueAddress();
    const send = () =>
      limited.request("POST", path, { json: body(), headers: { "cf-connecting-ip": address } });
    expect((await send()).status).toBe(200);
    expect((await send()).status).toBe(200);
    const { message } = await expectError(await send(), 429, "too-many-requests");
    expect(message).toMatch(/SIGNUPS/);
  });

  it("anonymous sign-in and deanonymize share the count: a third account from the address is refused", async () => {
    const address = uniqueAddress();
    const anonymous = await limited.request("POST", "/signin/anonymous", {
      json: {},
      headers: { "cf-connecting-ip": address },
    });
    const { session } = (await anonymous.json()) as { session: { accessToken: string } };
    const deanonymize = () =>
      limited.request("POST", "/user/deanonymize", {
        json: { signInMethod: "email-password", email: uniqueEmail("upgrade"), password: PASSWORD },
        token: session.accessToken,
        headers: { "cf-connecting-ip": address },
      });
    expect((await deanonymize()).status).toBe(200);
    await expectError(
      await limited.request("POST", "/signin/anonymous", {
        json: {},
        headers: { "cf-connecting-ip": address },
      }),
      429,
      "too-many-requests",
    );
  });
});

describe("the built-in page's email-link form", () => {
  it("meets the sign-up checks: the widget is in the form, and without its token no account is made", async () => {
    const svc = provider({ ...GUARDED, AUTH_TURNSTILE_SITE_KEY: "0x4AAAAAAAtestsitekey" });
    const browser = new Browser(svc);
    const client = await newClient(svc);
    const requestId = await requestIdOf(await authorize(svc, client));
    const page = await browser.get(`/oauth2/interaction?request_id=${requestId}`);
    // Only `signup` is guarded, and a link may create the account: the link form carries a widget of its own action.
    expect(await page.text()).toContain('data-sitekey="0x4AAAAAAAtestsitekey" data-action="passwordless"');
    const email = uniqueEmail("page-link");
    const refused = await browser.post("/oauth2/interaction/email-link", { request_id: requestId, email });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("Confirm that you are a person");
    expect(await userCount("email", email)).toBe(0);
    const sent = await browser.post("/oauth2/interaction/email-link", {
      request_id: requestId,
      email,
      "cf-turnstile-response": solved("passwordless"),
    });
    expect(sent.status).toBe(200);
    expect(await sent.text()).toContain("Check your email");
    expect(await userCount("email", email)).toBe(1);
  });
});

describe("a sign-up through an identity provider", () => {
  // Counted like any other self-service sign-up, but not challenged: the provider's callback comes back through the
  // browser and cannot carry a token, and the provider's own account is the human check (docs/decisions.md).
  it("needs no Turnstile token, and counts in SIGNUPS; a returning user is not counted", async () => {
    const svc = service({
      ...FAKE_PROVIDERS,
      ...GUARDED,
      ...Object.fromEntries(Object.values(ADDRESS_LIMITER_BINDINGS).map((name) => [name, undefined])),
      AUTH_RATE_LIMIT_ENABLE: "true",
      AUTH_RATE_LIMIT_SIGNUPS_BURST: "2",
    });
    const address = uniqueAddress();
    const signInAs = async (id: string) => {
      const { atProvider, cookie } = await startProvider(svc, "github");
      atProvider.searchParams.set("fake_id", id);
      atProvider.searchParams.set("fake_email", uniqueEmail("provider"));
      const callback = redirectedTo(await env.OUTBOUND!.fetch(atProvider.toString(), { redirect: "manual" }));
      const back = await svc.request("GET", callback.toString(), {
        headers: { cookie, "cf-connecting-ip": address },
      });
      return redirectedTo(back).searchParams;
    };
    // GitHub ids are numbers.
    const newId = () => String(Math.floor(Math.random() * 1e12));
    const returning = newId();
    const first = await signInAs(returning);
    expect(first.get("refreshToken"), first.toString()).toBeTruthy();
    expect((await signInAs(newId())).get("refreshToken")).toBeTruthy();
    expect((await signInAs(newId())).get("error")).toBe("too-many-requests");
    expect((await signInAs(returning)).get("refreshToken")).toBeTruthy();
  });
});

describe("under a crowd", () => {
  // 300 ways in at once (a magic link, an email code or an anonymous sign-in each, each with its own solved token):
  // every one answers 200 and makes its user; no request's challenge or count leaks into another's.
  it("300 concurrent sends and anonymous sign-ins with Turnstile on all answer 200", async () => {
    const svc = service(GUARDED);
    const tag = `crowd${crypto.randomUUID().slice(0, 6)}`;
    const emails: string[] = [];
    const requests = Array.from({ length: 300 }, (_, i) => {
      // A send takes a token solved for either of its names; anonymous sign-in is guarded as `signup` alone.
      if (i % 3 === 2) return post(svc, "/signin/anonymous", {}, { "x-cf-turnstile-response": solved() });
      const token = { "x-cf-turnstile-response": solved(i % 2 ? "signup" : "passwordless") };
      const email = uniqueEmail(tag);
      emails.push(email);
      return post(svc, i % 3 ? "/signin/otp/email" : "/signin/passwordless/email", { email }, token);
    });
    const statuses = (await Promise.all(requests)).map((response) => response.status);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    const made = await allInShards<{ n: number }>(
      "SELECT count(*) AS n FROM users WHERE email LIKE ?",
      `${tag}-%`,
    );
    expect(made.reduce((sum, row) => sum + row.n, 0)).toBe(emails.length);
  }, 60_000);
});
