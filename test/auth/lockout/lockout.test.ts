// The per-account lockout of password sign-in over HTTP (contract §13, docs/protection.md "Lockout"). Threats:
// credential stuffing spread over many addresses (counted per account, whatever the address, with per-address rate
// limits off); parallel guesses slipping past the count; the lock telling a known account from an unknown one
// (enumeration); a right password let through while locked; a lock that does not grow; a passkey locked out by
// someone else's password guesses. Each test names its own.
import { runInDurableObject } from "cloudflare:test";
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SoftwareAuthenticator } from "../../fakes/authenticator";
import {
  auditTypesOf,
  expectError,
  mailbox,
  NO_VERIFICATION,
  PASSWORD,
  service,
  signUp,
  uniqueAddress,
  uniqueEmail,
  type WireSession,
} from "../../helpers";
import { Browser } from "../../oauth2/page-browser";
import { authorize, newClient, provider, requestIdOf } from "../../oauth2/support";

const svc = service({ ...NO_VERIFICATION, AUTH_WEBAUTHN_ENABLED: "true" });
const WRONG = "not the password at all";
const THRESHOLD = 10;

afterEach(() => {
  vi.useRealTimers();
});

/** The server's clock (the same isolate's `Date`) stands still at `at`, or moves there: Retry-After is exact. */
function clockAt(at: number) {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(at);
}

const signIn = (email: string, password: string, ip = uniqueAddress()) =>
  svc.request("POST", "/signin/email-password", {
    json: { email, password },
    headers: { "cf-connecting-ip": ip },
  });

/** What a client can tell of an answer: status, body, and the headers that differ between answers. */
async function seen(response: Response) {
  return {
    status: response.status,
    body: await response.json(),
    retryAfter: response.headers.get("retry-after"),
    cacheControl: response.headers.get("cache-control"),
  };
}

/** The lockout notices in a mailbox. */
const lockMails = async (email: string) =>
  (await mailbox(svc, email)).filter((mail) => mail.text.includes("/unlock?ticket="));

describe("password lockout", () => {
  // Threat: credential stuffing from a new address for every guess; a right password accepted once locked.
  it("ten wrong passwords from ten addresses, then the right one: 429 account-locked with Retry-After, and one mail", async () => {
    clockAt(Date.now());
    const { user } = await signUp(svc);
    for (let i = 0; i < THRESHOLD; i++) {
      await expectError(await signIn(user.email, WRONG), 401, "invalid-email-password");
    }
    const locked = await signIn(user.email, PASSWORD);
    expect(locked.headers.get("retry-after")).toBe("900");
    const body = await expectError(locked, 429, "account-locked");
    expect(body.message).toBe("too many failed attempts: this sign-in method is locked for a while");
    const [mail, ...more] = await lockMails(user.email);
    expect(more).toHaveLength(0);
    expect(mail!.subject).toBe("Signing in to your account is paused");
    expect(mail!.text).toContain("with your password, so signing in that way is paused for 15 minutes");
    expect(mail!.text).toMatch(
      /http:\/\/localhost:8787\/auth\/v1\/unlock\?ticket=[0-9a-f-]{36}\.[0-9a-f]{64}\n/,
    );
    expect(mail!.html).toContain('<a href="http://localhost:8787/auth/v1/unlock?ticket=');
    expect(await auditTypesOf(user.id)).toContain("signin.locked");
  }, 30_000);

  // Threat: an attacker learning which emails have accounts from the lock (its status, body, Retry-After, timing).
  it("an unknown email answers exactly as a known one, failure for failure, lock for lock", async () => {
    clockAt(Date.now());
    const { user } = await signUp(svc);
    const stranger = uniqueEmail("nobody");
    for (let i = 0; i <= THRESHOLD; i++) {
      const known = await seen(await signIn(user.email, WRONG));
      const unknown = await seen(await signIn(stranger, WRONG));
      expect(unknown, `attempt ${i + 1}`).toEqual(known);
    }
    const last = await seen(await signIn(stranger, PASSWORD));
    expect(last).toEqual({
      status: 429,
      body: {
        status: 429,
        error: "account-locked",
        message: "too many failed attempts: this sign-in method is locked for a while",
      },
      retryAfter: "900",
      cacheControl: "no-store",
    });
    expect(await seen(await signIn(user.email, PASSWORD))).toEqual(last);
    // Nobody to mail for the unknown address; one mail for the known one.
    expect(await lockMails(stranger)).toHaveLength(0);
    expect(await lockMails(user.email)).toHaveLength(1);
  }, 30_000);

  // Threat: 50 guesses at once slipping past a read-then-write count (the lost update).
  it("50 parallel wrong guesses: exactly 10 are checked, 40 answered 429, one lock started, one mail", async () => {
    const { user } = await signUp(svc);
    // Fifty different guesses, as a guesser sends them (the same password sent again while in flight is one guess).
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => signIn(user.email, `${WRONG} ${i}`)),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(THRESHOLD);
    expect(statuses.filter((status) => status === 429)).toHaveLength(50 - THRESHOLD);
    for (const answer of answers.filter((a) => a.status === 429)) {
      expect((await answer.json()) as { error: string }).toMatchObject({ error: "account-locked" });
    }
    // The object's own record: one lock, its count started over, nothing lost or counted twice.
    const stub = svc.env.SIGN_IN_LOCKOUTS.get(svc.env.SIGN_IN_LOCKOUTS.idFromName(`user:${user.id}`));
    const state = await runInDurableObject(stub, (_instance, storage) =>
      storage.storage.kv.get<{ failures: number[]; locks: number; lockedUntil: number }>("factor:password"),
    );
    expect(state).toMatchObject({ failures: [], locks: 1 });
    expect(await lockMails(user.email)).toHaveLength(1);
    await expectError(await signIn(user.email, PASSWORD), 429, "account-locked");
  }, 30_000);

  // Threat, the other way: the lockout taking a crowd of the account's own clients (a fleet of scripts, many tabs)
  // for a guesser and locking the owner out. The same password in flight is one guess, forgiven once it is right.
  it("40 parallel sign-ins with the right password all succeed, and leave no failure counted", async () => {
    const { user } = await signUp(svc);
    const answers = await Promise.all(Array.from({ length: 40 }, () => signIn(user.email, PASSWORD)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(40).fill(200));
    const stub = svc.env.SIGN_IN_LOCKOUTS.get(svc.env.SIGN_IN_LOCKOUTS.idFromName(`user:${user.id}`));
    const state = await runInDurableObject(stub, (_instance, storage) =>
      storage.storage.kv.get<{ failures: number[]; inFlight?: Record<string, unknown> }>("factor:password"),
    );
    expect(state?.failures ?? []).toEqual([]);
    expect(state?.inFlight ?? {}).toEqual({});
    expect(await lockMails(user.email)).toHaveLength(0);
  }, 30_000);

  // Threat: a lock that never grows lets a patient guesser in at 10 guesses per 15 minutes forever.
  it("the next lock lasts twice as long: 15 minutes, then 30, each mailed", async () => {
    let now = Date.now();
    clockAt(now);
    const { user } = await signUp(svc);
    for (let i = 0; i < THRESHOLD; i++) await signIn(user.email, WRONG);
    expect((await signIn(user.email, PASSWORD)).headers.get("retry-after")).toBe("900");
    now += 15 * 60_000;
    clockAt(now);
    for (let i = 0; i < THRESHOLD; i++) {
      await expectError(await signIn(user.email, WRONG), 401, "invalid-email-password");
    }
    expect((await signIn(user.email, PASSWORD)).headers.get("retry-after")).toBe("1800");
    const mails = await lockMails(user.email);
    expect(mails).toHaveLength(2);
    expect(mails[0]!.text).toContain("paused for 30 minutes");
  }, 30_000);

  it("a right password forgives the wrong ones before it", async () => {
    const { user } = await signUp(svc);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < THRESHOLD - 1; i++) await signIn(user.email, WRONG);
      expect((await signIn(user.email, PASSWORD)).status).toBe(200);
    }
    expect(await lockMails(user.email)).toHaveLength(0);
  }, 30_000);

  // Threat: someone guessing a password locking its owner out of a passkey (contract §13).
  it("a passkey still signs in while the password is locked", async () => {
    const session = await signUp(svc);
    const device = new SoftwareAuthenticator("http://localhost:3000", "localhost");
    const options = (await (
      await svc.request("POST", "/user/webauthn/add", { token: session.accessToken })
    ).json()) as PublicKeyCredentialCreationOptionsJSON;
    const added = await svc.post(
      "/user/webauthn/verify",
      { credential: await device.create(options), nickname: "laptop" },
      session.accessToken,
    );
    expect(added.status).toBe(200);
    for (let i = 0; i < THRESHOLD; i++) await signIn(session.user.email, WRONG);
    await expectError(await signIn(session.user.email, PASSWORD), 429, "account-locked");
    const request = (await (
      await svc.post("/signin/webauthn", { email: session.user.email })
    ).json()) as PublicKeyCredentialRequestOptionsJSON;
    const passkey = await svc.post("/signin/webauthn/verify", { credential: await device.get(request) });
    expect(passkey.status).toBe(200);
    expect(((await passkey.json()) as { session: WireSession }).session.user.id).toBe(session.user.id);
  }, 30_000);

  // Threat: the built-in page as a way around the API's lock (it signs in through the same check).
  it("the built-in page's sign-in is locked too: a 429 page, the right password refused", async () => {
    const page = provider();
    const client = await newClient(page);
    const { user } = await signUp(page);
    for (let i = 0; i < THRESHOLD; i++) {
      await page.post("/signin/email-password", { email: user.email, password: WRONG });
    }
    const browser = new Browser(page);
    const requestId = await requestIdOf(await authorize(page, client));
    const answer = await browser.post("/oauth2/interaction/sign-in", {
      request_id: requestId,
      email: user.email,
      password: PASSWORD,
    });
    expect(answer.status).toBe(429);
    expect(await answer.text()).toContain("signing in this way is paused for 15 minutes");
    expect(browser.signedIn).toBe(false);
  }, 30_000);
});
