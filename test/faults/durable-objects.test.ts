// Durable Objects failing: overloaded (the call never ran) and reset in the middle of a call (the object did its
// work, the caller got an error). Threat: a refresh token spent twice, or spent with nothing usable handed out; a
// one-time code accepted twice; a session half made; a 500 where the contract promises 503 with Retry-After.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { FACE, PUBLISHABLE_KEY, supabaseService } from "../faces/supabase/support";
import {
  expectError,
  mailbox,
  NO_VERIFICATION,
  PASSWORD,
  service,
  sessionFromRefresh,
  signUp,
  type TestService,
  uniqueEmail,
  type WireSession,
} from "../helpers";
import { failingNamespace, failingShards } from "../support/faults";
import { accountOf, expectUnavailable } from "./support";

const refresh = (svc: ReturnType<typeof service>, refreshToken: string) =>
  svc.post("/token", { refreshToken });

describe("refresh: SessionFamilies failing", () => {
  it("reset after the rotation: 503; the retry inside the grace window gets the successor, the same one every time", async () => {
    const session = await signUp(service(NO_VERIFICATION));
    const { binding, fault } = failingNamespace(env.SESSION_FAMILIES, {
      match: /^rotate$/,
      when: "after",
      times: 1,
    });
    const svc = service({ ...NO_VERIFICATION, SESSION_FAMILIES: binding });
    await expectUnavailable(await refresh(svc, session.refreshToken));
    expect(fault.failures).toBe(1);
    // The object rotated: the client's retry of the same token is the duplicate the grace window answers.
    const first = (await (await refresh(svc, session.refreshToken)).json()) as WireSession;
    const second = (await (await refresh(svc, session.refreshToken)).json()) as WireSession;
    expect(first.refreshToken).toBe(second.refreshToken);
    expect(first.refreshToken).not.toBe(session.refreshToken);
    // One successor, and it works: the family was not ended by the retries.
    expect((await sessionFromRefresh(svc, first.refreshToken)).user.id).toBe(session.user.id);
  });

  it("overloaded: 503 with nothing spent; the retry rotates as usual", async () => {
    const session = await signUp(service(NO_VERIFICATION));
    const { binding } = failingNamespace(env.SESSION_FAMILIES, {
      match: /^rotate$/,
      when: "before",
      times: 1,
    });
    const svc = service({ ...NO_VERIFICATION, SESSION_FAMILIES: binding });
    const answer = await refresh(svc, session.refreshToken);
    expect(answer.headers.get("retry-after")).toBe("10");
    await expectUnavailable(answer);
    const next = await sessionFromRefresh(svc, session.refreshToken);
    expect((await sessionFromRefresh(svc, next.refreshToken)).user.id).toBe(session.user.id);
  });

  it("D1 failing after the rotation (the session's read): 503; the retry gets the same successor", async () => {
    const session = await signUp(service(NO_VERIFICATION));
    // Every read fails: the one beside the rotation (by the token's locator, src/auth/sessions/read-beside.ts, whose
    // failure is no answer), then the nearby one by the session's id (whose failure falls back to the primary,
    // src/db/compiled-read.ts) and the primary's.
    const { bindings, fault } = failingShards(env, { match: /from "sessions"/i });
    const svc = service({ ...NO_VERIFICATION, ...bindings });
    await expectUnavailable(await refresh(svc, session.refreshToken));
    expect(fault.failures).toBe(3);
    fault.heal();
    const first = await sessionFromRefresh(svc, session.refreshToken);
    const again = await sessionFromRefresh(svc, session.refreshToken);
    expect(again.refreshToken).toBe(first.refreshToken);
    expect((await sessionFromRefresh(svc, first.refreshToken)).user.id).toBe(session.user.id);
  });
});

describe("sign-in: SessionFamilies failing as the session starts", () => {
  it.each(["before", "after"] as const)(
    "%s the family starts: 503, no session row left; the retry signs in",
    async (when) => {
      const email = uniqueEmail("do-signin");
      await signUp(service(NO_VERIFICATION), email);
      const before = (await accountOf(email)).sessions;
      const { binding } = failingNamespace(env.SESSION_FAMILIES, { match: /^start$/, when, times: 1 });
      const svc = service({ ...NO_VERIFICATION, SESSION_FAMILIES: binding });
      await expectUnavailable(await svc.post("/signin/email-password", { email, password: PASSWORD }));
      // The row of the half-made session goes after the answer (waitUntil), which the harness waits for.
      expect((await accountOf(email)).sessions).toBe(before);
      const answer = await svc.post("/signin/email-password", { email, password: PASSWORD });
      const { session } = (await answer.json()) as { session: WireSession };
      expect((await sessionFromRefresh(svc, session.refreshToken)).user.email).toBe(email);
    },
  );
});

describe("email OTP: OneTimeCode failing", () => {
  const enabled = { AUTH_OTP_EMAIL_ENABLED: "true" };
  async function codeFor(svc: ReturnType<typeof service>, email: string): Promise<string> {
    expect((await svc.post("/signin/otp/email", { email })).status).toBe(200);
    const [mail] = await mailbox(svc, email);
    return /\b(\d{6})\b/.exec(mail!.text)![1]!;
  }

  it("overloaded on send: 503, no mail; the retry sends a code", async () => {
    const { binding } = failingNamespace(env.ONE_TIME_CODES, { times: 1 });
    const svc = service({ ...enabled, ONE_TIME_CODES: binding });
    const email = uniqueEmail("otp-send");
    await expectUnavailable(await svc.post("/signin/otp/email", { email }));
    expect(await mailbox(svc, email)).toEqual([]);
    expect(await codeFor(svc, email)).toMatch(/^\d{6}$/);
  });

  it("reset after the code was checked: 503; the code is spent, never accepted twice; a new code signs in", async () => {
    const email = uniqueEmail("otp-verify");
    const code = await codeFor(service(enabled), email);
    const { binding } = failingNamespace(env.ONE_TIME_CODES, { match: /^verify$/, when: "after", times: 1 });
    const svc = service({ ...enabled, ONE_TIME_CODES: binding });
    await expectUnavailable(await svc.post("/signin/otp/email/verify", { email, otp: code }));
    await expectError(await svc.post("/signin/otp/email/verify", { email, otp: code }), 400, "invalid-otp");
    const fresh = await codeFor(svc, email);
    expect((await svc.post("/signin/otp/email/verify", { email, otp: fresh })).status).toBe(200);
  });
});

// The Supabase face's mailed code: `verifyOtp({type: 'email'})` reads the code object of each kind it takes (a
// magic link's and a sign-up's) at once. One of them reset after its work: 503; whatever the code was is spent, and
// the ticket behind it is not consumed by a code that was never accepted.
describe("the Supabase face's mailed code: OneTimeCode failing", () => {
  it("reset after a redeem: 503 in GoTrue's shape; the code is spent, never accepted twice; a new mail's code signs in", async () => {
    const face = (bindings: Record<string, unknown> = {}) =>
      supabaseService({ AUTH_EMAIL_PASSWORDLESS_ENABLED: "true", ...bindings });
    const email = uniqueEmail("face-code");
    const send = (svc: TestService) =>
      svc.request("POST", `${FACE}/auth/v1/otp`, { headers: { apikey: PUBLISHABLE_KEY }, json: { email } });
    const verify = (svc: TestService, token: string) =>
      svc.request("POST", `${FACE}/auth/v1/verify`, {
        headers: { apikey: PUBLISHABLE_KEY },
        json: { type: "email", email, token },
      });
    const newestCode = async (svc: TestService) =>
      /(\d{6})\s*$/.exec((await mailbox(svc, email))[0]!.text.trim())![1]!;
    const healthy = face();
    expect((await send(healthy)).status).toBe(200);
    const code = await newestCode(healthy);
    const { binding } = failingNamespace(env.ONE_TIME_CODES, { match: /^redeem$/, when: "after", times: 1 });
    const failing = face({ ONE_TIME_CODES: binding });
    const refused = await verify(failing, code);
    expect(refused.status, await refused.clone().text()).toBe(503);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ error_code: "unexpected_failure" });
    expect((await verify(failing, code)).status).toBe(403);
    expect((await send(failing)).status).toBe(200);
    const answer = await verify(failing, await newestCode(failing));
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ user: { email } });
  });
});

describe("WebAuthn: WebauthnChallenge failing", () => {
  it("the challenge cannot be stored: 503 with Retry-After, no user; the retry gets options", async () => {
    const { binding } = failingNamespace(env.WEBAUTHN_CHALLENGES, { times: 1 });
    const svc = service({ ...NO_VERIFICATION, AUTH_WEBAUTHN_ENABLED: "true", WEBAUTHN_CHALLENGES: binding });
    const email = uniqueEmail("webauthn");
    await expectUnavailable(await svc.post("/signup/webauthn", { email }));
    expect((await accountOf(email)).user).toBeNull();
    const options = await svc.post("/signup/webauthn", { email });
    expect(options.status).toBe(200);
    expect(((await options.json()) as { challenge: string }).challenge).toBeTruthy();
  });
});
