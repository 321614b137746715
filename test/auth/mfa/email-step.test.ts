import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../../src/auth/mfa/totp";
import { supabaseClient, supabaseService } from "../../faces/supabase/support";
import {
  decodeJwt,
  expectError,
  follow,
  mailbox,
  PASSWORD,
  signUp,
  uniqueAddress,
  uniqueEmail,
  verifyPath,
  type WireSession,
} from "../../helpers";
import { userD1 } from "../../support/shards";

/**
 * Issue 47, "Second factors beyond TOTP and SMS": the email step. `POST /user/mfa` `{activeMfaType: "email"}` makes a
 * code mailed to the verified address the second step after a password; the first factor answers an `mfaEmail:`
 * ticket, completed at `POST /signin/mfa/email`. The code is six digits, five minutes, valid with its own ticket
 * only, spent once; the ticket is spent once; mails are counted per user (the `EMAIL` bucket).
 */

const svc = supabaseService({
  AUTH_MFA_ENABLED: "true",
  AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
  AUTH_OTP_EMAIL_ENABLED: "true",
});
const ADMIN = { "x-hasura-admin-secret": String(svc.env.AUTH_ADMIN_SECRET) };

type SignInAnswer = { session: WireSession | null; mfa: { ticket: string } | null };
const passwordSignIn = async (email: string) =>
  (await (await svc.post("/signin/email-password", { email, password: PASSWORD })).json()) as SignInAnswer;
const emailStep = (ticket: string, otp: string) => svc.post("/signin/mfa/email", { ticket, otp });
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

/** The code of the newest second-step mail to `email`. */
async function mailedCode(email: string): Promise<string> {
  const [mail] = await mailbox(svc, email);
  expect(mail!.subject).toBe("Your second-step code");
  return /\b(\d{6})\b/.exec(mail!.text)![1]!;
}

/** A user whose address is verified (the admin's PATCH), signed in. */
async function verifiedUser(tag: string): Promise<{ email: string; session: WireSession }> {
  const email = uniqueEmail(tag);
  const session = await signUp(svc, email);
  const patched = await svc.request("PATCH", `/admin/users/${session.user.id}`, {
    json: { emailVerified: true },
    headers: ADMIN,
  });
  expect(patched.status).toBe(200);
  return { email, session };
}

/** A verified user whose second step is the email code. */
async function emailStepUser(tag: string) {
  const user = await verifiedUser(tag);
  const chosen = await svc.post("/user/mfa", { activeMfaType: "email" }, user.session.accessToken);
  expect(chosen.status).toBe(200);
  return user;
}

describe("the email second step", () => {
  it("an unverified address cannot be the factor; a verified one is, shown as activeMfaType email", async () => {
    // Threat: a code mailed to an address nobody proved is a code to whoever typed that address (a typo, a
    // pre-hijacked account): it must not stand for the owner.
    const session = await signUp(svc, uniqueEmail("mfaunv"));
    await expectError(
      await svc.post("/user/mfa", { activeMfaType: "email" }, session.accessToken),
      401,
      "unverified-user",
    );
    expect((await passwordSignIn(session.user.email)).session).not.toBeNull();

    const { session: verified } = await emailStepUser("mfaon");
    expect(await (await svc.get("/user", verified.accessToken)).json()).toMatchObject({
      activeMfaType: "email",
    });
  });

  it("sign-in → mfaEmail ticket → mailed code → session; wrong code, replayed ticket and replayed code refused", async () => {
    // Threat: the password alone signing in past the email step; a code guessed, or used twice, or a ticket reused.
    const { email } = await emailStepUser("mfart");
    const first = await passwordSignIn(email);
    expect(first.session).toBeNull();
    expect(first.mfa?.ticket).toMatch(/^mfaEmail:[0-9a-f-]{36}$/);
    const code = await mailedCode(email);
    // The TOTP and SMS routes do not take the email step's ticket.
    await expectError(
      await svc.post("/signin/mfa/totp", { ticket: first.mfa!.ticket, otp: code }),
      401,
      "invalid-ticket",
    );
    await expectError(
      await svc.post("/signin/mfa/sms", { ticket: first.mfa!.ticket, otp: code }),
      401,
      "invalid-ticket",
    );
    await expectError(await emailStep(first.mfa!.ticket, wrong(code)), 401, "invalid-totp");
    const done = await emailStep(first.mfa!.ticket, code);
    expect(done.status).toBe(200);
    const { session } = (await done.json()) as { session: WireSession };
    expect(session.user.activeMfaType).toBe("email");
    const row = await userD1(session.user.id)
      .prepare("SELECT method FROM sessions WHERE id = ?")
      .bind(session.refreshTokenId)
      .first<{ method: string }>();
    expect(row?.method).toBe("mfa-email");
    // The ticket is spent, and so is the code: a new sign-in's ticket does not take the old code.
    await expectError(await emailStep(first.mfa!.ticket, code), 401, "invalid-ticket");
    const again = await passwordSignIn(email);
    await expectError(await emailStep(again.mfa!.ticket, code), 401, "invalid-totp");
  });

  it("two completions at once with the right code: one session, the other refused", async () => {
    // Threat: racing the same ticket and code twice to get two sessions from one proof.
    const { email } = await emailStepUser("mfarace");
    const { mfa } = await passwordSignIn(email);
    const code = await mailedCode(email);
    const answers = await Promise.all([emailStep(mfa!.ticket, code), emailStep(mfa!.ticket, code)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 401]);
  });

  it("a code is bound to its ticket, and an expired ticket is refused", async () => {
    // Threat: a code mailed for one sign-in completing another (the owner's code typed into the form of a sign-in
    // someone else started with the password), and a ticket kept past its five minutes.
    const { email, session } = await emailStepUser("mfabind");
    const a = await passwordSignIn(email);
    const codeA = await mailedCode(email);
    const b = await passwordSignIn(email);
    const codeB = await mailedCode(email);
    await expectError(await emailStep(a.mfa!.ticket, codeB), 401, "invalid-totp");
    // B's code was no guess at A's: A's own code still completes A.
    expect((await emailStep(a.mfa!.ticket, codeA)).status).toBe(200);
    await userD1(session.user.id)
      .prepare("UPDATE mfa_tickets SET expires_at = 0 WHERE user_id = ?")
      .bind(session.user.id)
      .run();
    await expectError(await emailStep(b.mfa!.ticket, codeB), 401, "invalid-ticket");
  });

  it("a mailbox first factor (magic link, email code) is not asked the same mailbox again", async () => {
    // The email step proves the inbox: after a sign-in that proved it, it would prove nothing more. The session
    // is the first factor's (one factor), so it is not recorded as a second step.
    const { email } = await emailStepUser("mfalink");
    expect(await (await svc.post("/signin/passwordless/email", { email })).json()).toBe("OK");
    const [link] = await mailbox(svc, email);
    const params = await follow(svc, verifyPath(link!));
    expect(params.get("mfaTicket")).toBeNull();
    expect(params.get("refreshToken")).not.toBeNull();
  });

  it("switching activeMfaType: off, back on; sms and webauthn need their factor; TOTP stays the step while on", async () => {
    // Threat: choosing a factor the user does not hold would lock them out, or leave them with no step at all.
    const { email, session } = await emailStepUser("mfaswitch");
    const token = session.accessToken;
    await expectError(
      await svc.post("/user/mfa", { activeMfaType: "sms" }, token),
      400,
      "mfa-type-not-found",
    );
    await expectError(
      await svc.post("/user/mfa", { activeMfaType: "webauthn" }, token),
      400,
      "mfa-type-not-found",
    );
    expect((await svc.post("/user/mfa", { activeMfaType: "" }, token)).status).toBe(200);
    const off = await passwordSignIn(email);
    expect(off.session?.user.activeMfaType).toBeNull();
    // With nothing on, `""` is the contract's refusal, as before.
    await expectError(
      await svc.post("/user/mfa", { activeMfaType: "", code: "123456" }, token),
      401,
      "disabled-mfa-totp",
    );
    await expectError(await svc.post("/user/mfa", { activeMfaType: "totp" }, token), 400, "invalid-request");
    expect((await svc.post("/user/mfa", { activeMfaType: "email" }, token)).status).toBe(200);
    expect((await passwordSignIn(email)).mfa?.ticket).toMatch(/^mfaEmail:/);

    // TOTP turned on beside it is the step; another choice is refused until TOTP is off (with its code).
    const { totpSecret } = (await (await svc.get("/mfa/totp/generate", token)).json()) as {
      totpSecret: string;
    };
    const secret = decodeBase32IgnorePadding(totpSecret);
    const code = (offset: bigint) => totpCode(secret, totpStep(Date.now()) + offset);
    expect((await svc.post("/user/mfa", { activeMfaType: "totp", code: code(0n) }, token)).status).toBe(200);
    expect((await passwordSignIn(email)).mfa?.ticket).toMatch(/^mfaTotp:/);
    await expectError(
      await svc.post("/user/mfa", { activeMfaType: "email" }, token),
      400,
      "totp-already-active",
    );
    expect((await svc.post("/user/mfa", { activeMfaType: "", code: code(1n) }, token)).status).toBe(200);
    // TOTP off: the email factor the user still holds is the step again.
    expect((await passwordSignIn(email)).mfa?.ticket).toMatch(/^mfaEmail:/);
  });

  it("the Supabase face lists the email factor, and its challenge mails a code that verifies to aal2", async () => {
    // One account, two faces: the factor chosen on the Nhost face is the Supabase face's too.
    const { email } = await emailStepUser("mfasb");
    const supabase = supabaseClient(svc, undefined, { "cf-connecting-ip": uniqueAddress() });
    expect((await supabase.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    const listed = await supabase.auth.mfa.listFactors();
    expect(listed.data?.all).toEqual([expect.objectContaining({ factor_type: "email", status: "verified" })]);
    const factorId = listed.data!.all[0]!.id;
    const challenge = await supabase.auth.mfa.challenge({ factorId });
    expect(challenge.error).toBeNull();
    const verified = await supabase.auth.mfa.verify({
      factorId,
      challengeId: challenge.data!.id,
      code: await mailedCode(email),
    });
    expect(verified.error).toBeNull();
    expect(decodeJwt(verified.data!.access_token).payload.aal).toBe("aal2");
  });
});

describe("resending is limited", () => {
  const limited = supabaseService({
    AUTH_MFA_ENABLED: "true",
    AUTH_RATE_LIMIT_ENABLE: "true",
    AUTH_RATE_LIMIT_EMAIL_BURST: "2",
  });

  it("each first factor mails a code, counted per user: past the EMAIL bucket, 429 and no mail", async () => {
    // Threat: someone holding the password making the owner's mailbox a flood of codes by signing in again and again.
    const { email } = await emailStepUser("mfaflood");
    const signIn = () =>
      limited.request("POST", "/signin/email-password", {
        json: { email, password: PASSWORD },
        headers: { "cf-connecting-ip": uniqueAddress() },
      });
    expect((await signIn()).status).toBe(200);
    expect((await signIn()).status).toBe(200);
    const refused = await signIn();
    expect(refused.status).toBe(429);
    expect((await mailbox(svc, email)).filter((m) => m.subject === "Your second-step code")).toHaveLength(2);
  });
});
