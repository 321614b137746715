// Probe (takeover): on the Supabase face, verifyOtp({type: 'email'}) (auth-js's email OTP sign-in) also redeems a
// sign-up VERIFICATION code, which keeps the password an attacker set on the unproven account. The attacker
// replaces the victim's sign-in code with one by `resend({type: 'signup'})`.
import { describe, expect, it } from "vitest";
import { mailbox, uniqueAddress, uniqueEmail } from "./helpers";
import { supabaseClient, supabaseService } from "./faces/supabase/support";

const svc = supabaseService({ AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "true", AUTH_EMAIL_PASSWORDLESS_ENABLED: "true" });
const newestCode = async (to: string) => /(\d{6})\s*$/.exec((await mailbox(svc, to))[0]!.text.trim())![1]!;

describe("email OTP sign-in redeeming a sign-up verification code", () => {
  it("keeps the attacker's password and sessions", async () => {
    const email = uniqueEmail("victim");
    const attacker = supabaseClient(svc, undefined, { "cf-connecting-ip": uniqueAddress() });
    expect((await attacker.auth.signUp({ email, password: "attacker password 123" })).error).toBeNull();
    // The victim asks for a sign-in code; the attacker, right after, asks the sign-up mail again.
    const victim = supabaseClient(svc, undefined, { "cf-connecting-ip": uniqueAddress() });
    expect((await victim.auth.signInWithOtp({ email })).error).toBeNull();
    const victimCode = await newestCode(email);
    expect((await attacker.auth.resend({ type: "signup", email })).error).toBeNull();
    const newest = await newestCode(email);
    console.log("victim's code", victimCode, "newest code", newest, "newest mail subject:", (await mailbox(svc, email))[0]!.subject);
    // The first code no longer works; the victim types the newest one into the same OTP screen.
    console.log("victim's own code:", (await victim.auth.verifyOtp({ email, token: victimCode, type: "email" })).error?.code ?? "ok");
    const signedIn = await victim.auth.verifyOtp({ email, token: newest, type: "email" });
    console.log("victim signed in with the newest code:", signedIn.error?.code ?? "ok", signedIn.data.user?.email_confirmed_at);
    // The attacker's password still signs in to the now-confirmed account.
    const again = await supabaseClient(svc, undefined, { "cf-connecting-ip": uniqueAddress() }).auth.signInWithPassword({ email, password: "attacker password 123" });
    console.log("attacker password after the victim's sign-in:", again.error?.code ?? "SIGNED IN", again.data.user?.id === signedIn.data.user?.id);
    expect(again.error).not.toBeNull();
  });
});
