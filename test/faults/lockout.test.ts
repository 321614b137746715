// The per-account lockout's `SignInLockout` object failing (src/auth/lockout/): overloaded (the call never ran) and
// reset in the middle of a call (the object did its work, the answer was lost). The threat named above each test is
// what it keeps out; every one of them is a 503 in the contract's shape, never a 500.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { expectError, NO_VERIFICATION, PASSWORD, SERVER, service, signUp } from "../helpers";
import { failingNamespace } from "../support/faults";
import { expectUnavailable } from "./support";

const plain = service(NO_VERIFICATION);
const signIn = (svc: ReturnType<typeof service>, email: string, password = PASSWORD) =>
  svc.post("/signin/email-password", { email, password });

describe("password sign-in: SignInLockout failing", () => {
  // Threat: a password checked while its attempt was not counted (a way around the lock).
  it("overloaded on the count: 503 (Retry-After 10) before the password's verdict is used; the retry signs in", async () => {
    const { user } = await signUp(plain);
    const { binding, fault } = failingNamespace(env.SIGN_IN_LOCKOUTS, { match: /^take$/, times: 1 });
    const svc = service({ ...NO_VERIFICATION, SIGN_IN_LOCKOUTS: binding });
    const answer = await signIn(svc, user.email);
    expect(answer.headers.get("retry-after")).toBe("10");
    await expectUnavailable(answer, "take overloaded");
    expect(fault.failures).toBe(1);
    expect((await signIn(svc, user.email)).status).toBe(200);
  });

  // Threat: as above, with the attempt counted by the object and only its answer lost.
  it("reset after the count was taken: 503; the retry signs in", async () => {
    const { user } = await signUp(plain);
    const { binding } = failingNamespace(env.SIGN_IN_LOCKOUTS, { match: /^take$/, when: "after", times: 1 });
    const svc = service({ ...NO_VERIFICATION, SIGN_IN_LOCKOUTS: binding });
    await expectUnavailable(await signIn(svc, user.email), "take reset");
    expect((await signIn(svc, user.email)).status).toBe(200);
  });

  // Threat: a right password answered 503 because its count could not be taken back.
  it.each(["before", "after"] as const)(
    "forgiving fails %s the object acts, after the right password: the sign-in completes",
    async (when) => {
      const { user } = await signUp(plain);
      const { binding, fault } = failingNamespace(env.SIGN_IN_LOCKOUTS, {
        match: /^forgive$/,
        when,
        times: 1,
      });
      const svc = service({ ...NO_VERIFICATION, SIGN_IN_LOCKOUTS: binding });
      expect((await signIn(svc, user.email)).status).toBe(200);
      expect(fault.failures).toBe(1);
    },
  );
});

describe("unlocking: SignInLockout failing", () => {
  it("the admin's unlock: 503 in the contract's shape", async () => {
    const { user } = await signUp(plain);
    const { binding } = failingNamespace(env.SIGN_IN_LOCKOUTS, { match: /^clear$/, times: 1 });
    const svc = service({ ...NO_VERIFICATION, SIGN_IN_LOCKOUTS: binding });
    const answer = await svc.request("POST", `/admin/users/${user.id}/unlock`, {
      headers: { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) },
    });
    await expectUnavailable(answer, "clear overloaded");
  });

  // Threat: a mailed link spent by a call whose answer was lost, or a stack trace on the page.
  it("the mailed link's page: a 503 page that says to try again; the link still works after", async () => {
    const { user } = await signUp(plain);
    for (let i = 0; i < 10; i++) await signIn(plain, user.email, "not the password at all");
    const mails = (await (await plain.get(`/dev/mailbox?to=${encodeURIComponent(user.email)}`)).json()) as {
      text: string;
    }[];
    const ticket = new URL(/(http\S+\/unlock\?ticket=\S+)/.exec(mails[0]!.text)![1]!).searchParams.get(
      "ticket",
    )!;
    const { binding } = failingNamespace(env.SIGN_IN_LOCKOUTS, { match: /^redeem$/, times: 1 });
    const svc = service({ ...NO_VERIFICATION, SIGN_IN_LOCKOUTS: binding });
    const post = () =>
      svc.request("POST", "/unlock", {
        body: new URLSearchParams({ ticket }).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(SERVER).origin },
      });
    const failed = await post();
    expect(failed.status).toBe(503);
    expect(Number(failed.headers.get("retry-after"))).toBeGreaterThan(0);
    const text = await failed.text();
    expect(text).toContain("Unlocking is not possible right now");
    expect(text).not.toMatch(/Durable Object|overloaded|\bat \S+:\d+/);
    expect((await post()).status).toBe(200);
    expect((await signIn(plain, user.email)).status).toBe(200);
    await expectError(await signIn(plain, user.email, "still wrong"), 401, "invalid-email-password");
  }, 30_000);
});

describe("known devices: SignInLockout failing", () => {
  // Threat: a sign-in turned into an error because its device could not be remembered (the record is written after
  // the answer, best effort: the device is merely not known yet).
  it("remembering the device fails: the sign-in still answers 200", async () => {
    const { user } = await signUp(plain);
    const { binding, fault } = failingNamespace(env.SIGN_IN_LOCKOUTS, {
      match: /^rememberDevice$/,
      times: 1,
    });
    const svc = service({ ...NO_VERIFICATION, SIGN_IN_LOCKOUTS: binding });
    const answer = await svc.request("POST", "/signin/email-password", {
      json: { email: user.email, password: PASSWORD },
      headers: { "sec-fetch-site": "same-origin" },
    });
    expect(answer.status).toBe(200);
    expect(fault.failures).toBe(1);
  });

  // Threat: a password change answered 200 while the devices someone else signed in on stayed known; or a 500.
  it("forgetting the devices at a password change fails: 503 in the contract's shape; the retry succeeds", async () => {
    const session = await signUp(plain);
    const { binding } = failingNamespace(env.SIGN_IN_LOCKOUTS, { match: /^forgetDevices$/, times: 1 });
    const svc = service({ ...NO_VERIFICATION, SIGN_IN_LOCKOUTS: binding });
    const change = () => svc.post("/user/password", { newPassword: `${PASSWORD} 2` }, session.accessToken);
    await expectUnavailable(await change(), "forgetDevices overloaded");
    expect((await change()).status).toBe(200);
  });
});
