// The second factor's `GuessGuard` and the legacy drawer's `RefreshSession` (src/token-families/legacy/) failing:
// overloaded (the call never ran) and reset in the middle of a call (the object did its work, the answer was lost).
// The threat named above each test is what it keeps out.
import { env } from "cloudflare:test";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../src/auth/mfa/totp";
import {
  expectError,
  NO_VERIFICATION,
  PASSWORD,
  service,
  sessionFromRefresh,
  signUp,
  uniqueEmail,
  type WireSession,
} from "../helpers";
import { basic, grantFor, oauth2Error, postForm, provider, type TokenAnswer } from "../oauth2/support";
import { failingNamespace, failingShards } from "../support/faults";
import { userD1 } from "../support/shards";
import { legacyGrantToken, legacySession } from "../token-families/legacy/support";
import { expectOAuth2Unavailable, expectUnavailable } from "./support";

const MFA = { ...NO_VERIFICATION, AUTH_MFA_ENABLED: "true" };
const plain = service(MFA);
const codeAt = (secret: Uint8Array) => totpCode(secret, totpStep(Date.now()));

/** A user with TOTP active whose last accepted step is forgotten, so the current code signs in. */
async function userWithTotp(): Promise<{ email: string; secret: Uint8Array; session: WireSession }> {
  const email = uniqueEmail("guess");
  const session = await signUp(plain, email);
  const generated = await plain.get("/mfa/totp/generate", session.accessToken);
  const secret = decodeBase32IgnorePadding(((await generated.json()) as { totpSecret: string }).totpSecret);
  const activated = await plain.post(
    "/user/mfa",
    { code: codeAt(secret), activeMfaType: "totp" },
    session.accessToken,
  );
  expect(activated.status).toBe(200);
  await forgetLastStep(session.user.id);
  return { email, secret, session };
}

const forgetLastStep = (userId: string) =>
  userD1(userId).prepare("UPDATE users SET totp_last_step = NULL WHERE id = ?").bind(userId).run();

async function mfaTicket(email: string): Promise<string> {
  const response = await plain.post("/signin/email-password", { email, password: PASSWORD });
  return ((await response.json()) as { mfa: { ticket: string } }).mfa.ticket;
}

const verifyTotp = (svc: ReturnType<typeof service>, ticket: string, otp: string) =>
  svc.post("/signin/mfa/totp", { ticket, otp });

async function signedIn(response: Response): Promise<WireSession> {
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as { session: WireSession }).session;
}

describe("TOTP sign-in: GuessGuard failing", () => {
  // Threat: a guess checked while its count was not taken (a way around the lock), or a code spent by a call whose
  // answer was a 503, so the user's retry with the code on their screen is refused.
  it("overloaded on the count: 503 (Retry-After 10) before the code is looked at; the retry with the same code signs in", async () => {
    const { email, secret } = await userWithTotp();
    const ticket = await mfaTicket(email);
    const { binding, fault } = failingNamespace(env.GUESS_GUARDS, { match: /^take$/, times: 1 });
    const svc = service({ ...MFA, GUESS_GUARDS: binding });
    const answer = await verifyTotp(svc, ticket, codeAt(secret));
    expect(answer.headers.get("retry-after")).toBe("10");
    await expectUnavailable(answer, "take overloaded");
    expect(fault.failures).toBe(1);
    expect((await signedIn(await verifyTotp(svc, ticket, codeAt(secret)))).user.email).toBe(email);
  });

  // Threat: as above, with the count taken by the object and only its answer lost.
  it("reset after the count was taken: 503; the code is not spent, and the retry with it signs in", async () => {
    const { email, secret } = await userWithTotp();
    const ticket = await mfaTicket(email);
    const { binding } = failingNamespace(env.GUESS_GUARDS, { match: /^take$/, when: "after", times: 1 });
    const svc = service({ ...MFA, GUESS_GUARDS: binding });
    await expectUnavailable(await verifyTotp(svc, ticket, codeAt(secret)), "take reset");
    expect((await signedIn(await verifyTotp(svc, ticket, codeAt(secret)))).user.email).toBe(email);
  });

  // Threat: a right code spent (its time step recorded, a recovery code deleted) and answered 503 because the count
  // could not be forgiven: the retry finds the code used, a recovery code is gone for good.
  it.each(["before", "after"] as const)(
    "forgiving fails %s the object acts, after a right TOTP code: the sign-in completes, once",
    async (when) => {
      const { email, secret } = await userWithTotp();
      const ticket = await mfaTicket(email);
      const { binding, fault } = failingNamespace(env.GUESS_GUARDS, { match: /^forgive$/, when, times: 1 });
      const svc = service({ ...MFA, GUESS_GUARDS: binding });
      const session = await signedIn(await verifyTotp(svc, ticket, codeAt(secret)));
      expect(fault.failures).toBe(1);
      expect((await sessionFromRefresh(svc, session.refreshToken)).user.email).toBe(email);
      // The ticket was consumed by that sign-in: it opens nothing twice.
      await expectError(await verifyTotp(svc, ticket, codeAt(secret)), 401, "invalid-ticket");
    },
  );

  it("forgiving fails after a right recovery code: the sign-in completes, and the code is spent", async () => {
    const { email, secret, session } = await userWithTotp();
    const made = await plain.post("/mfa/recovery-codes", { code: codeAt(secret) }, session.accessToken);
    const [recovery] = ((await made.json()) as { recoveryCodes: string[] }).recoveryCodes;
    const { binding } = failingNamespace(env.GUESS_GUARDS, { match: /^forgive$/, times: 1 });
    const svc = service({ ...MFA, GUESS_GUARDS: binding });
    expect((await signedIn(await verifyTotp(svc, await mfaTicket(email), recovery!))).user.email).toBe(email);
    await expectError(await verifyTotp(svc, await mfaTicket(email), recovery!), 401, "invalid-totp");
  });
});

describe("legacy session tokens: RefreshSession failing", () => {
  const refresh = (svc: ReturnType<typeof service>, refreshToken: string) =>
    svc.post("/token", { refreshToken });

  /** The session's locator as its row holds it. */
  const locatorOf = async (userId: string, sessionId: string) =>
    (await userD1(userId)
      .prepare("SELECT locator FROM sessions WHERE id = ?")
      .bind(sessionId)
      .first<{ locator: string | null }>())!.locator;

  /**
   * The retry of the legacy token: inside the grace window, the same successor every time; that successor
   * refreshes (its family was started), the row has its locator, and the family was not reset by the retries.
   */
  async function expectOneWorkingSuccessor(
    svc: ReturnType<typeof service>,
    legacy: { id: string; token: string },
    userId: string,
  ) {
    const first = await sessionFromRefresh(svc, legacy.token);
    const again = await sessionFromRefresh(svc, legacy.token);
    expect(again.refreshToken).toBe(first.refreshToken);
    expect(first.refreshTokenId).toBe(legacy.id);
    expect(await locatorOf(userId, legacy.id)).toBe(first.refreshToken.slice(0, 6));
    const third = await sessionFromRefresh(svc, first.refreshToken);
    expect(third.user.id).toBe(userId);
    // A duplicate of the legacy token now still gets the same successor, and restarts nothing: the newest token
    // refreshes (a family started again would take it for a replay and end the session).
    expect((await sessionFromRefresh(svc, legacy.token)).refreshToken).toBe(first.refreshToken);
    expect((await sessionFromRefresh(svc, third.refreshToken)).user.id).toBe(userId);
  }

  // Threat: the object rotated, the answer was lost, and the successor the retry gets names a family that was never
  // started: the user is signed out by a 503 (or handed two successors).
  it("reset after the object rotated: 503; the retry gets one successor, the same every time, and it refreshes", async () => {
    const user = (await signUp(service(NO_VERIFICATION))).user;
    const legacy = await legacySession(user.id);
    const { binding, fault } = failingNamespace(env.REFRESH_SESSIONS, {
      match: /^rotate$/,
      when: "after",
      times: 1,
    });
    const svc = service({ ...NO_VERIFICATION, REFRESH_SESSIONS: binding });
    await expectUnavailable(await refresh(svc, legacy.token), "rotate reset");
    expect(fault.failures).toBe(1);
    await expectOneWorkingSuccessor(svc, legacy, user.id);
  });

  // Threat: as above, with the object's rotation answered and the successor's family failing to start.
  it("the successor's family cannot start (SessionFamilies overloaded): 503; the retry's successor refreshes", async () => {
    const user = (await signUp(service(NO_VERIFICATION))).user;
    const legacy = await legacySession(user.id);
    const { binding, fault } = failingNamespace(env.SESSION_FAMILIES, { match: /^start$/, times: 1 });
    const svc = service({ ...NO_VERIFICATION, SESSION_FAMILIES: binding });
    await expectUnavailable(await refresh(svc, legacy.token), "family start overloaded");
    expect(fault.failures).toBe(1);
    await expectOneWorkingSuccessor(svc, legacy, user.id);
  });

  // Threat: a session moved onto a family whose row never learns the family's locator: sign-out and the session
  // list no longer reach the family.
  it("D1 failing at the row's locator: 503; the retry's successor refreshes and the row gets its locator", async () => {
    const user = (await signUp(service(NO_VERIFICATION))).user;
    const legacy = await legacySession(user.id);
    const { bindings, fault } = failingShards(env, {
      match: /^update "sessions" set [^;]*"locator" = /i,
      times: 1,
    });
    const svc = service({ ...NO_VERIFICATION, ...bindings });
    await expectUnavailable(await refresh(svc, legacy.token), "locator write");
    expect(fault.failures).toBe(1);
    await expectOneWorkingSuccessor(svc, legacy, user.id);
  });
});

describe("legacy OAuth2 refresh tokens: RefreshSession failing", () => {
  // Threat: as for sessions: the grant's successor handed again after a lost answer names a family never started.
  it("reset after the object rotated: 503 temporarily_unavailable; the retry's successor is one, and it refreshes", async () => {
    const oauth2 = provider();
    const { client } = await grantFor(oauth2);
    const { legacy } = await legacyGrantToken(client.clientId);
    const { binding } = failingNamespace(env.REFRESH_SESSIONS, {
      match: /^rotate$/,
      when: "after",
      times: 1,
    });
    const svc = provider({ REFRESH_SESSIONS: binding });
    const refresh = (refreshToken: string) =>
      postForm(
        svc,
        "/oauth2/token",
        { grant_type: "refresh_token", refresh_token: refreshToken },
        basic(client),
      );
    await expectOAuth2Unavailable(await refresh(legacy));
    const successorOf = async (token: string) => {
      const answer = await refresh(token);
      expect(answer.status, await answer.clone().text()).toBe(200);
      return ((await answer.json()) as TokenAnswer).refresh_token!;
    };
    const first = await successorOf(legacy);
    expect(await successorOf(legacy)).toBe(first);
    const next = await successorOf(first);
    expect(await successorOf(legacy)).toBe(first);
    expect(await successorOf(next)).toMatch(/^ort_/);
    // Past the grace window the legacy token is a replay, as without the fault: the grant ends.
    const strict = provider({ AUTH_REFRESH_TOKEN_REUSE_INTERVAL: "0" });
    await oauth2Error(
      await postForm(
        strict,
        "/oauth2/token",
        { grant_type: "refresh_token", refresh_token: legacy },
        basic(client),
      ),
      400,
      "invalid_grant",
    );
  });
});
