import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { PASSWORD, uniqueAddress, uniqueEmail } from "../../helpers";
import { uniquePhone } from "../../support/phones";
import { supabaseClient, supabaseService } from "./support";

/**
 * auth-js's `mfa` namespace with a phone factor (contract supabase.md §2, "Factors"): the code goes by SMS (the
 * development transport here) from the core's one-time code object, five wrong tries per code, the user's guard
 * beside it; verified, it makes the password grant's session aal1, stepped up to aal2 (`amr` `mfa/phone`).
 */

const svc = supabaseService({ AUTH_MFA_ENABLED: "true", AUTH_DEV_SMS: "true" });

const client = () => supabaseClient(svc, undefined, { "cf-connecting-ip": uniqueAddress() });

/** The newest code texted to `to` (the list is newest first). */
async function textedCode(to: string): Promise<string> {
  const texts = (await (await svc.get(`/dev/sms?to=${encodeURIComponent(to)}`)).json()) as { body: string }[];
  return /\b(\d{6})\b/.exec(texts[0]!.body)![1]!;
}

describe("auth-js mfa with a phone factor", () => {
  it("mfa.enroll (phone), mfa.challenge texts a code, mfa.verify; then signInWithPassword is aal1 until the SMS step", async () => {
    const supabase = client();
    const email = uniqueEmail("sbphone");
    const phone = uniquePhone();
    await supabase.auth.signUp({ email, password: PASSWORD });
    const enrolled = await supabase.auth.mfa.enroll({ factorType: "phone", phone, friendlyName: "mobile" });
    expect(enrolled.error).toBeNull();
    expect(enrolled.data).toMatchObject({ type: "phone", friendly_name: "mobile", phone: phone.slice(1) });
    const factorId = enrolled.data!.id;

    const challenge = await supabase.auth.mfa.challenge({ factorId });
    expect(challenge.data).toMatchObject({ type: "phone", expires_at: expect.any(Number) });
    const code = await textedCode(phone);
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, "0");
    const failed = await supabase.auth.mfa.verify({ factorId, challengeId: challenge.data!.id, code: wrong });
    expect(failed.error).toMatchObject({ status: 422, code: "mfa_verification_failed" });
    const verified = await supabase.auth.mfa.verify({ factorId, challengeId: challenge.data!.id, code });
    expect(verified.error).toBeNull();
    expect(decodeJwt(verified.data!.access_token)).toMatchObject({
      aal: "aal2",
      amr: [{ method: "mfa/phone" }],
    });
    expect((await supabase.auth.mfa.listFactors()).data?.phone).toEqual([
      expect.objectContaining({ id: factorId, status: "verified", factor_type: "phone" }),
    ]);
    // The factor holds on the Nhost face too: its password sign-in gets the SMS step's ticket, not a session
    // (test/auth/mfa/factors-both-faces.test.ts goes on from there).
    const nhost = await svc.post("/signin/email-password", { email, password: PASSWORD });
    expect(await nhost.json()).toMatchObject({
      session: null,
      mfa: { ticket: expect.stringMatching(/^mfaSms:/) },
    });

    const later = client();
    const signedIn = await later.auth.signInWithPassword({ email, password: PASSWORD });
    expect(decodeJwt(signedIn.data.session!.access_token)).toMatchObject({ aal: "aal1" });
    expect((await later.auth.mfa.getAuthenticatorAssuranceLevel()).data).toMatchObject({
      currentLevel: "aal1",
      nextLevel: "aal2",
    });
    const stepChallenge = await later.auth.mfa.challenge({ factorId });
    const stepped = await later.auth.mfa.verify({
      factorId,
      challengeId: stepChallenge.data!.id,
      code: await textedCode(phone),
    });
    expect(decodeJwt(stepped.data!.access_token)).toMatchObject({ aal: "aal2" });
  });

  it("mfa.enroll refuses a number that is not E.164 (400) and a second verified factor of the same number (422)", async () => {
    const supabase = client();
    await supabase.auth.signUp({ email: uniqueEmail("sbphone2"), password: PASSWORD });
    const bad = await supabase.auth.mfa.enroll({ factorType: "phone", phone: "not a number" });
    expect(bad.error).toMatchObject({ status: 400, code: "validation_failed" });
    const phone = uniquePhone();
    const first = await supabase.auth.mfa.enroll({ factorType: "phone", phone });
    const challenge = await supabase.auth.mfa.challenge({ factorId: first.data!.id });
    await supabase.auth.mfa.verify({
      factorId: first.data!.id,
      challengeId: challenge.data!.id,
      code: await textedCode(phone),
    });
    const again = await supabase.auth.mfa.enroll({ factorType: "phone", phone });
    expect(again.error).toMatchObject({ status: 422, code: "mfa_verified_factor_exists" });
  });
});
