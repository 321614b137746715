import { describe, expect, it } from "vitest";
import { PASSWORD, uniqueEmail } from "../../helpers";
import { answers, hookReceiver } from "../../hooks/support";
import { FACE, supabaseClient, supabaseService } from "./support";

/**
 * The Supabase face's mails through the app's send-email hook (contract supabase.md §2, "Mail"): the payload carries
 * GoTrue's `email_data` (`token`, `token_hash`, `redirect_to`, `email_action_type`, `site_url`), so an app that writes
 * its own mail, linking its own page, calls `verifyOtp({token_hash, type})` or `verifyOtp({email, token, type})`.
 */

const WELCOME = "http://localhost:3000/welcome";
const receiver = hookReceiver({ SEND_EMAIL: answers.noContent() });
const svc = supabaseService({
  ...receiver.bindings,
  AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
  AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "true",
  AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: WELCOME,
});

const sentTo = (email: string) => receiver.callsOf("SEND_EMAIL").filter((p) => p.to === email);

describe("the send-email hook's payload on the Supabase face", () => {
  it("signUp's confirmation: email_data as GoTrue's; verifyOtp({token_hash, type: 'signup'}) confirms and signs in", async () => {
    const email = uniqueEmail("hook-signup");
    const supabase = supabaseClient(svc);
    const signedUp = await supabase.auth.signUp({
      email,
      password: PASSWORD,
      options: { emailRedirectTo: WELCOME },
    });
    expect(signedUp.error).toBeNull();
    expect(signedUp.data.session).toBeNull();
    const [sent] = sentTo(email);
    expect(sent.email_data).toEqual({
      token: expect.stringMatching(/^\d{6}$/),
      token_hash: expect.any(String),
      redirect_to: WELCOME,
      email_action_type: "signup",
      site_url: "http://localhost:3000",
      token_new: "",
      token_hash_new: "",
    });
    expect(sent.link).toBe(
      `${FACE}/auth/v1/verify?token=${encodeURIComponent(sent.email_data.token_hash)}&type=signup&redirect_to=${encodeURIComponent(WELCOME)}`,
    );
    expect(sent.message.text).toContain(sent.email_data.token);
    const verified = await supabase.auth.verifyOtp({
      token_hash: sent.email_data.token_hash,
      type: "signup",
    });
    expect(verified.error).toBeNull();
    expect(verified.data.user?.email_confirmed_at).toBeTruthy();
    expect(
      (await supabaseClient(svc).auth.signInWithPassword({ email, password: PASSWORD })).error,
    ).toBeNull();
  });

  it("signInWithOtp: the hook's token is the code verifyOtp takes with the address", async () => {
    const email = uniqueEmail("hook-otp");
    await supabaseClient(svc).auth.signInWithOtp({ email });
    const [sent] = sentTo(email);
    expect(sent.email_data.email_action_type).toBe("magiclink");
    const verified = await supabaseClient(svc).auth.verifyOtp({
      email,
      token: sent.email_data.token,
      type: "email",
    });
    expect(verified.error).toBeNull();
    expect(receiver.unverified).toEqual([]);
  });
});
