// The owner's device is not locked out (issue 42, docs/protection.md "The owner's device is not locked out"): a
// sign-in that presents the device cookie this account was given at an earlier sign-in is counted on that device,
// not on the account. Threats, each named at its test: a stranger's ten guesses keeping the owner's right password
// out (lockout as denial of service); the exemption as a way around the lock (a forged cookie, another account's
// cookie, a cookie from before a password reset, a known device guessing without limit); an unlock link that resets
// the doubling, so a patient guesser is never slowed.
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  auditTypesOf,
  expectError,
  mailbox,
  NO_VERIFICATION,
  PASSWORD,
  SERVER,
  service,
  signUp,
  uniqueAddress,
} from "../../helpers";
import { Browser, ORIGIN } from "../../oauth2/page-browser";
import { authorize, location, newClient, provider, requestIdOf } from "../../oauth2/support";

const svc = service(NO_VERIFICATION);
const WRONG = "not the password at all";
const THRESHOLD = 10;

afterEach(() => {
  vi.useRealTimers();
});

/** The server's clock (the same isolate's `Date`) stands still at `at`: Retry-After is exact. */
function clockAt(at: number) {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(at);
}

interface From {
  /** The device cookie the client sends back, if any. */
  cookie?: string;
  /** `Sec-Fetch-Site`, as a browser sends it. */
  site?: string;
}

const signIn = (email: string, password: string, from: From = {}) =>
  svc.request("POST", "/signin/email-password", {
    json: { email, password },
    headers: {
      "cf-connecting-ip": uniqueAddress(),
      ...(from.cookie ? { cookie: `edge_auth_device=${from.cookie}` } : {}),
      ...(from.site ? { "sec-fetch-site": from.site } : {}),
    },
  });

/** The device cookie an answer sets. */
function deviceCookieOf(response: Response): string {
  const line = response.headers.getSetCookie().find((value) => value.startsWith("edge_auth_device="));
  expect(line, "the answer sets the device cookie").toBeDefined();
  return line!.slice("edge_auth_device=".length).split(";")[0]!;
}

/** A browser on the service's own pages or a same-site app signs in: the cookie it is given is known from now. */
async function knownDevice(email: string): Promise<string> {
  const answer = await signIn(email, PASSWORD, { site: "same-origin" });
  expect(answer.status).toBe(200);
  return deviceCookieOf(answer);
}

/** A stranger's ten wrong guesses, without the cookie: the account's password is locked. */
async function lockAccount(email: string) {
  for (let i = 0; i < THRESHOLD; i++) {
    await expectError(await signIn(email, `${WRONG} ${i}`), 401, "invalid-email-password");
  }
  await expectError(await signIn(email, PASSWORD), 429, "account-locked");
}

const lockMails = async (email: string) =>
  (await mailbox(svc, email)).filter((mail) => mail.text.includes("/unlock?ticket="));

describe("the owner's device is not locked out", () => {
  // Threat: lockout as denial of service. Anyone who knows the address sends ten wrong passwords and the owner's
  // right one is refused for 15 minutes, then 30, … (issue 42, §1 "Low").
  it("the account locked by a stranger, the owner's browser with its cookie still signs in with the right password", async () => {
    const { user } = await signUp(svc);
    const owner = await knownDevice(user.email);
    await lockAccount(user.email);
    const answer = await signIn(user.email, PASSWORD, { cookie: owner });
    expect(answer.status, await answer.clone().text()).toBe(200);
    // The owner's success neither lifts nor forgives the account's lock: the stranger is still refused.
    await expectError(await signIn(user.email, PASSWORD), 429, "account-locked");
    expect((await signIn(user.email, PASSWORD, { cookie: owner })).status).toBe(200);
  }, 30_000);

  // Threat, as above, for an app's API client: it gets the exemption by keeping the cookie (credentials: include,
  // or a cookie jar). A fresh cookie given to a client that may drop it is known once it comes back.
  it("an API client that sends the cookie back is known from its second sign-in; one that never did is not", async () => {
    const { user } = await signUp(svc);
    const first = await signIn(user.email, PASSWORD);
    const kept = deviceCookieOf(first);
    expect((await signIn(user.email, PASSWORD, { cookie: kept })).status).toBe(200);
    // An app on another site without credentials: its fresh cookie never comes back, so it is not remembered.
    const dropped = deviceCookieOf(await signIn(user.email, PASSWORD, { site: "cross-site" }));
    await lockAccount(user.email);
    expect((await signIn(user.email, PASSWORD, { cookie: kept })).status).toBe(200);
    await expectError(await signIn(user.email, PASSWORD, { cookie: dropped }), 429, "account-locked");
  }, 30_000);

  // Threat, as above, on the hosted sign-in page: the built-in page signs in through the same count.
  it("the hosted page: the browser that signed in there before signs in again while the account is locked", async () => {
    const page = provider();
    const client = await newClient(page);
    const { user } = await signUp(page);
    const browser = new Browser(page);
    const pageSignIn = async () =>
      browser.post(
        "/oauth2/interaction/sign-in",
        {
          request_id: await requestIdOf(await authorize(page, client)),
          email: user.email,
          password: PASSWORD,
        },
        { ...ORIGIN, "sec-fetch-site": "same-origin" },
      );
    const before = await pageSignIn();
    expect(before.status).toBe(303);
    expect(browser.jar.get("edge_auth_device")).toMatch(/^[A-Za-z0-9_-]{22}$/);
    for (let i = 0; i < THRESHOLD; i++) {
      await page.post("/signin/email-password", { email: user.email, password: `${WRONG} ${i}` });
    }
    await expectError(
      await page.post("/signin/email-password", { email: user.email, password: PASSWORD }),
      429,
      "account-locked",
    );
    browser.jar.delete("oauth2_session");
    const after = await pageSignIn();
    expect(after.status, await after.clone().text()).toBe(303);
    expect(location(after).toString().startsWith(SERVER)).toBe(true);
    expect(browser.signedIn).toBe(true);
  }, 30_000);

  // Threat: the exemption as unlimited guessing. Whoever holds a known device (a shared computer, a stolen
  // laptop) still gets only the threshold of guesses before that device is locked, and locking it locks only it.
  it("a known device's own wrong guesses lock that device only, after its own threshold", async () => {
    clockAt(Date.now());
    const { user } = await signUp(svc);
    const guessing = await knownDevice(user.email);
    const other = await knownDevice(user.email);
    for (let i = 0; i < THRESHOLD; i++) {
      await expectError(
        await signIn(user.email, `${WRONG} ${i}`, { cookie: guessing }),
        401,
        "invalid-email-password",
      );
    }
    const locked = await signIn(user.email, PASSWORD, { cookie: guessing });
    await expectError(locked, 429, "account-locked");
    expect(locked.headers.get("retry-after")).toBe("900");
    // Only that device: the owner's other browser and the account itself still sign in.
    expect((await signIn(user.email, PASSWORD, { cookie: other })).status).toBe(200);
    expect((await signIn(user.email, PASSWORD)).status).toBe(200);
    // The owner is told, as of any lock, and the audit says it was a device's.
    expect(await lockMails(user.email)).toHaveLength(1);
    expect(await auditTypesOf(user.id)).toContain("signin.locked");
  }, 30_000);

  // Threat: a cookie carried from one account to another. A browser that signed in to the attacker's own account
  // (a known device there) must be a stranger to the victim's.
  it("the cookie of another account's device gives no exemption", async () => {
    const { user: victim } = await signUp(svc);
    const { user: attacker } = await signUp(svc);
    const theirs = await knownDevice(attacker.email);
    await lockAccount(victim.email);
    await expectError(await signIn(victim.email, PASSWORD, { cookie: theirs }), 429, "account-locked");
    // …and it is still a known device of its own account.
    expect((await signIn(attacker.email, PASSWORD, { cookie: theirs })).status).toBe(200);
  }, 30_000);

  // Threat: a made-up cookie. The object keeps only keyed tags of cookies it was given; a client's own value is
  // none of them, and a value of the wrong shape is no cookie at all (never a 500).
  it("a forged cookie gives no exemption", async () => {
    const { user } = await signUp(svc);
    await knownDevice(user.email);
    await lockAccount(user.email);
    const forged = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
    for (const cookie of [forged, "A".repeat(22), "x".repeat(500), "%00;%3B"]) {
      await expectError(await signIn(user.email, PASSWORD, { cookie }), 429, "account-locked");
    }
  }, 30_000);

  // Threat: someone who signed in before the owner reset the password (a stolen session, a shared computer) keeps
  // the exemption and guesses the new password apart from the account's lock.
  it("after a password reset, the old cookie gives no exemption", async () => {
    const { user } = await signUp(svc);
    const old = await knownDevice(user.email);
    await lockAccount(user.email);
    expect((await signIn(user.email, PASSWORD, { cookie: old })).status).toBe(200);
    expect(await (await svc.post("/user/password/reset", { email: user.email })).json()).toBe("OK");
    const mail = (await mailbox(svc, user.email)).find((m) => m.text.includes("passwordReset"));
    const ticket = /ticket=(passwordReset[^&\s]+)/.exec(decodeURIComponent(mail!.text))![1]!;
    const renewed = `${PASSWORD} renewed`;
    expect(await (await svc.post("/user/password", { newPassword: renewed, ticket })).json()).toBe("OK");
    await expectError(await signIn(user.email, renewed, { cookie: old }), 429, "account-locked");
  }, 30_000);
});

describe("the lock series across an unlock link", () => {
  // Threat: an unlock link that forgets the series lets a guesser who keeps at it meet a 15-minute lock every time
  // the owner unlocks: the doubling must go on (15 min, then 30, … to 24 h).
  it("lock, unlock by the mailed link, lock again: the second lock lasts twice as long", async () => {
    clockAt(Date.now());
    const { user } = await signUp(svc);
    await lockAccount(user.email);
    expect((await signIn(user.email, PASSWORD)).headers.get("retry-after")).toBe("900");
    const [mail] = await lockMails(user.email);
    const ticket = new URL(/(http\S+\/unlock\?ticket=\S+)/.exec(mail!.text)![1]!).searchParams.get("ticket")!;
    const unlocked = await svc.request("POST", "/unlock", {
      body: new URLSearchParams({ ticket }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(SERVER).origin },
    });
    expect(unlocked.status).toBe(200);
    // Unlocked, the failures forgotten: the owner signs in.
    expect((await signIn(user.email, PASSWORD)).status).toBe(200);
    await lockAccount(user.email);
    expect((await signIn(user.email, PASSWORD)).headers.get("retry-after")).toBe("1800");
  }, 30_000);
});
