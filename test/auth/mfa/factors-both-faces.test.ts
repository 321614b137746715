import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import type { SupabaseClient } from "@supabase/supabase-js";
import { describe, expect, it } from "vitest";
import { totpStep as stepOf, totpCode } from "../../../src/auth/mfa/totp";
import { inBrowser } from "../../faces/supabase/in-browser";
import { supabaseClient, supabaseService } from "../../faces/supabase/support";
import { SoftwareAuthenticator } from "../../fakes/authenticator";
import {
  expectError,
  follow,
  mailbox,
  PASSWORD,
  sessionFromRefresh,
  uniqueAddress,
  uniqueEmail,
  verifyPath,
  type WireSession,
} from "../../helpers";
import { uniquePhone } from "../../support/phones";
import { userD1 } from "../../support/shards";

/**
 * "One account, two faces": a second factor added through the Supabase face (auth-js's `mfa.enroll` of a phone or a
 * `webauthn` factor) holds on the Nhost face. A phone factor answers `{session: null, mfa: {ticket: "mfaSms:…"}}`,
 * its code texted, taken by `POST /signin/mfa/sms` (and by `POST /signin/mfa/totp`, the one route the Nhost SDK
 * knows), and shows as `activeMfaType: "sms"`; a `webauthn` factor alone answers the passkey step's `mfaWebauthn:`.
 * The credential resets drop every kind of factor.
 */

const svc = supabaseService({
  AUTH_MFA_ENABLED: "true",
  AUTH_DEV_SMS: "true",
  AUTH_WEBAUTHN_ENABLED: "true",
  AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
  AUTH_OTP_EMAIL_ENABLED: "true",
});
const ADMIN = { "x-hasura-admin-secret": String(svc.env.AUTH_ADMIN_SECRET) };
const ORIGIN = "http://localhost:3000";

const client = () => supabaseClient(svc, undefined, { "cf-connecting-ip": uniqueAddress() });
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

/** The newest code texted to `to` (the list is newest first). */
async function textedCode(to: string): Promise<string> {
  const texts = (await (await svc.get(`/dev/sms?to=${encodeURIComponent(to)}`)).json()) as { body: string }[];
  return /\b(\d{6})\b/.exec(texts[0]!.body)![1]!;
}

/** A user signed up through the Supabase face (supabase-js), the address not yet proven. */
async function supabaseUser(tag: string) {
  const supabase = client();
  const email = uniqueEmail(tag);
  const signedUp = await supabase.auth.signUp({ email, password: PASSWORD });
  expect(signedUp.error).toBeNull();
  return { supabase, email, userId: signedUp.data.user!.id };
}

/** The sign-up verification mail followed (a first proof that keeps what the account has, as a sign-up's must). */
async function proveBySignUpMail(email: string): Promise<void> {
  expect(await (await svc.post("/user/email/send-verification-email", { email })).json()).toBe("OK");
  const [verification] = await mailbox(svc, email);
  await follow(svc, verifyPath(verification!));
}

/** auth-js `mfa.enroll` (phone), `mfa.challenge`, `mfa.verify` with the texted code: a verified phone factor. */
async function enrollPhone(supabase: SupabaseClient): Promise<{ phone: string; factorId: string }> {
  const phone = uniquePhone();
  const enrolled = await supabase.auth.mfa.enroll({ factorType: "phone", phone });
  expect(enrolled.error).toBeNull();
  const factorId = enrolled.data!.id;
  const challenge = await supabase.auth.mfa.challenge({ factorId });
  const verified = await supabase.auth.mfa.verify({
    factorId,
    challengeId: challenge.data!.id,
    code: await textedCode(phone),
  });
  expect(verified.error).toBeNull();
  return { phone, factorId };
}

/** auth-js `mfa.webauthn.register`: a verified `webauthn` factor, made by a software authenticator (returned). */
async function enrollKey(supabase: SupabaseClient): Promise<SoftwareAuthenticator> {
  const device = new SoftwareAuthenticator(ORIGIN, "localhost");
  const { error } = await inBrowser(device, () =>
    supabase.auth.mfa.webauthn.register({
      friendlyName: "yubikey",
      webauthn: { rpId: "localhost", rpOrigins: [ORIGIN] },
    }),
  );
  expect(error).toBeNull();
  return device;
}

type SignInAnswer = { session: WireSession | null; mfa: { ticket: string } | null };
const passwordSignIn = (email: string, password = PASSWORD) =>
  svc.post("/signin/email-password", { email, password });
const totpStep = (ticket: string, otp: string) => svc.post("/signin/mfa/totp", { ticket, otp });
const factorRows = async (userId: string) =>
  (await userD1(userId)
    .prepare("SELECT count(*) AS n FROM mfa_factors WHERE user_id = ? AND factor_type <> 'totp'")
    .bind(userId)
    .first<{ n: number }>())!.n;

describe("a phone factor on the Nhost face", () => {
  it("signInEmailPassword answers with the SMS step's ticket; the texted code completes it; activeMfaType is sms", async () => {
    // Threat: the password alone, through the Nhost face, skipping the phone factor set up on the Supabase face.
    const { supabase, email } = await supabaseUser("nhphone");
    await proveBySignUpMail(email);
    const { phone, factorId } = await enrollPhone(supabase);

    const first = (await (await passwordSignIn(email)).json()) as SignInAnswer;
    expect(first.session).toBeNull();
    expect(first.mfa?.ticket).toMatch(/^mfaSms:/);
    const code = await textedCode(phone);
    await expectError(await totpStep(first.mfa!.ticket, wrong(code)), 401, "invalid-totp");
    // The email step's route does not take the SMS step's ticket; its own route does (issue 47).
    await expectError(
      await svc.post("/signin/mfa/email", { ticket: first.mfa!.ticket, otp: code }),
      401,
      "invalid-ticket",
    );
    const completed = await svc.post("/signin/mfa/sms", { ticket: first.mfa!.ticket, otp: code });
    expect(completed.status).toBe(200);
    const { session } = (await completed.json()) as { session: WireSession };
    // Nhost's own value for an SMS second factor, in the session's user and GET /user alike.
    expect(session.user.activeMfaType).toBe("sms");
    const me = await svc.get("/user", session.accessToken);
    expect(await me.json()).toMatchObject({ activeMfaType: "sms" });
    // The code was used once: the same code does not open a second ticket.
    const second = (await (await passwordSignIn(email)).json()) as SignInAnswer;
    await expectError(await totpStep(second.mfa!.ticket, code), 401, "invalid-totp");

    // auth-js `mfa.unenroll` (its session is aal2): the factor gone, the Nhost face asks no second step again.
    expect((await supabase.auth.mfa.unenroll({ factorId })).error).toBeNull();
    const after = (await (await passwordSignIn(email)).json()) as SignInAnswer;
    expect(after.mfa).toBeNull();
    expect(after.session?.user.activeMfaType).toBeNull();
  });

  it("activeMfaType is totp while TOTP is on beside the phone factor (changeUserMfa), and sms again once it is off", async () => {
    // Threat: turning TOTP off through the Nhost face must not drop the phone factor's step with it.
    const { supabase, email } = await supabaseUser("nhphonetotp");
    await proveBySignUpMail(email);
    const { phone } = await enrollPhone(supabase);
    const { mfa } = (await (await passwordSignIn(email)).json()) as SignInAnswer;
    const { session } = (await (await totpStep(mfa!.ticket, await textedCode(phone))).json()) as {
      session: WireSession;
    };
    const generated = (await (await svc.get("/mfa/totp/generate", session.accessToken)).json()) as {
      totpSecret: string;
    };
    const secret = decodeBase32IgnorePadding(generated.totpSecret);
    const codeAt = (offset = 0n) => totpCode(secret, stepOf(Date.now()) + offset);
    const on = await svc.post("/user/mfa", { code: codeAt(), activeMfaType: "totp" }, session.accessToken);
    expect(on.status).toBe(200);
    expect(await (await svc.get("/user", session.accessToken)).json()).toMatchObject({
      activeMfaType: "totp",
    });
    // With TOTP on, the TOTP step asks TOTP's code (no text is sent for it).
    const withTotp = (await (await passwordSignIn(email)).json()) as SignInAnswer;
    expect(withTotp.mfa?.ticket).toMatch(/^mfaTotp:/);

    const off = await svc.post("/user/mfa", { code: codeAt(1n), activeMfaType: "" }, session.accessToken);
    expect(off.status).toBe(200);
    expect(await (await svc.get("/user", session.accessToken)).json()).toMatchObject({
      activeMfaType: "sms",
    });
    const again = (await (await passwordSignIn(email)).json()) as SignInAnswer;
    expect(again.session).toBeNull();
    expect((await totpStep(again.mfa!.ticket, await textedCode(phone))).status).toBe(200);
  });

  it("verifySignInMfaTotp counts wrong texted codes: five spend the ticket", async () => {
    // Threat: guessing the six-digit texted code at the TOTP step; the ticket's five tries hold, as for TOTP.
    const { supabase, email } = await supabaseUser("nhphoneguess");
    await proveBySignUpMail(email);
    const { phone } = await enrollPhone(supabase);
    const { mfa } = (await (await passwordSignIn(email)).json()) as SignInAnswer;
    const code = await textedCode(phone);
    for (let i = 0; i < 5; i++) {
      await expectError(await totpStep(mfa!.ticket, wrong(code)), 401, "invalid-totp");
    }
    await expectError(await totpStep(mfa!.ticket, code), 401, "invalid-ticket");
  });

  it("signInPasswordlessEmail (magic link) and signInOTPEmail give the ticket, not a session", async () => {
    // Threat: a mailed link or code is one factor, like the password: it must not skip the phone factor.
    const { supabase, email } = await supabaseUser("nhphonelink");
    await proveBySignUpMail(email);
    const { phone } = await enrollPhone(supabase);

    expect(await (await svc.post("/signin/passwordless/email", { email })).json()).toBe("OK");
    const [link] = await mailbox(svc, email);
    const params = await follow(svc, verifyPath(link!));
    expect(params.get("refreshToken")).toBeNull();
    const ticket = params.get("mfaTicket");
    expect(ticket).toMatch(/^mfaSms:/);
    expect((await totpStep(ticket!, await textedCode(phone))).status).toBe(200);

    expect(await (await svc.post("/signin/otp/email", { email })).json()).toBe("OK");
    const [mail] = await mailbox(svc, email);
    const otp = /\b(\d{6})\b/.exec(mail!.text)![1]!;
    const byCode = (await (
      await svc.post("/signin/otp/email/verify", { email, otp })
    ).json()) as SignInAnswer;
    expect(byCode.session).toBeNull();
    expect((await totpStep(byCode.mfa!.ticket, await textedCode(phone))).status).toBe(200);
  });
});

describe("a webauthn factor on the Nhost face", () => {
  it("signInEmailPassword and a magic link answer the passkey step's ticket, completed by the factor's key", async () => {
    // Threat: the password (or the mailbox) alone skipping the security key the user made their second factor.
    const { supabase, email } = await supabaseUser("nhkey");
    await proveBySignUpMail(email);
    const device = await enrollKey(supabase);
    const first = (await (await passwordSignIn(email)).json()) as SignInAnswer;
    expect(first.session).toBeNull();
    expect(first.mfa?.ticket).toMatch(/^mfaWebauthn:/);

    expect(await (await svc.post("/signin/passwordless/email", { email })).json()).toBe("OK");
    const [link] = await mailbox(svc, email);
    const params = await follow(svc, verifyPath(link!));
    expect(params.get("mfaTicket")).toMatch(/^mfaWebauthn:/);
    expect(params.get("refreshToken")).toBeNull();

    // The factor's key answers the step (issue 47): options for the ticket, then the assertion.
    const options = await (await svc.post("/signin/mfa/webauthn", { ticket: first.mfa!.ticket })).json();
    const credential = await device.get(options as Parameters<typeof device.get>[0]);
    const done = await svc.post("/signin/mfa/webauthn/verify", { ticket: first.mfa!.ticket, credential });
    expect(done.status).toBe(200);
    // The Supabase face keeps GoTrue's rule: the password's aal1 session, to be stepped up by the key.
    expect((await client().auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
  });
});

describe("resets drop every kind of factor", () => {
  it("a password reset drops the phone and webauthn factors added before the address was proven", async () => {
    // Threat (pre-hijacking): an attacker signs up the victim's address, adds their own phone and key as second
    // factors; the victim's verification click keeps them (as a genuine sign-up's must); the victim's password reset
    // takes the account back, and the attacker's factors must go with it.
    const { supabase, email, userId } = await supabaseUser("victim");
    await enrollPhone(supabase);
    await enrollKey(supabase);
    await proveBySignUpMail(email);
    expect(await factorRows(userId)).toBe(2);

    expect(await (await svc.post("/user/password/reset", { email })).json()).toBe("OK");
    const reset = (await mailbox(svc, email)).find((mail) => mail.text.includes("passwordReset"))!;
    const params = await follow(svc, verifyPath(reset));
    expect(params.get("mfaTicket")).toBeNull();
    const session = await sessionFromRefresh(svc, params.get("refreshToken")!);
    expect(session.user.activeMfaType).toBeNull();
    expect(await factorRows(userId)).toBe(0);
  });

  it("a password reset of a never-proven account drops the phone factor the attacker added", async () => {
    // Threat (pre-hijacking): as above, with the victim's reset the first proof of the address.
    const { supabase, email, userId } = await supabaseUser("victim2");
    await enrollPhone(supabase);
    expect(await (await svc.post("/user/password/reset", { email })).json()).toBe("OK");
    const reset = (await mailbox(svc, email)).find((mail) => mail.text.includes("passwordReset"))!;
    const params = await follow(svc, verifyPath(reset));
    expect((await sessionFromRefresh(svc, params.get("refreshToken")!)).user.activeMfaType).toBeNull();
    expect(await factorRows(userId)).toBe(0);
  });

  it("the admin API's MFA reset (activeMfaType: null) drops a phone factor too", async () => {
    // Threat: a user who lost their phone is reset by the operator, yet the factor still gates (or a stale `sms`
    // names a factor that is gone).
    const { supabase, email, userId } = await supabaseUser("nhreset");
    await proveBySignUpMail(email);
    await enrollPhone(supabase);
    const before = await svc.request("GET", `/admin/users/${userId}`, { headers: ADMIN });
    expect(await before.json()).toMatchObject({ activeMfaType: "sms" });
    const patched = await svc.request("PATCH", `/admin/users/${userId}`, {
      headers: ADMIN,
      json: { activeMfaType: null },
    });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ activeMfaType: null });
    expect(await factorRows(userId)).toBe(0);
    const signedIn = (await (await passwordSignIn(email)).json()) as SignInAnswer;
    expect(signedIn.session?.user.activeMfaType).toBeNull();
  });
});
