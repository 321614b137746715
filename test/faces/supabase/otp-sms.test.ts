import { describe, expect, it } from "vitest";
import { supabaseClient, supabaseService } from "./support";

/**
 * The Supabase face's SMS codes (contract supabase.md §2), driven by the real `@supabase/supabase-js`:
 * `signInWithOtp({phone})`, `verifyOtp({phone, token, type: 'sms'})` and `resend({type: 'sms'})`, over the core's SMS
 * sign-in (its codes, caps and lockout). The development transport gives the texted code.
 */

const svc = supabaseService({ AUTH_SMS_PASSWORDLESS_ENABLED: "true", AUTH_DEV_SMS: "true" });

/** A fresh US number, as GoTrue takes it: without its `+` (555-01xx numbers are reserved for fiction). */
const uniquePhone = () => `1415555${String(Math.floor(Math.random() * 10_000)).padStart(4, "0")}`;

async function textedCode(phone: string): Promise<string | undefined> {
  const response = await svc.get(`/dev/sms?to=${encodeURIComponent(`+${phone}`)}`);
  const [sms] = (await response.json()) as { body: string }[];
  return sms && /\b(\d{6})\b/.exec(sms.body)?.[1];
}

describe("signInWithOtp and verifyOtp by phone", () => {
  it("signInWithOtp({phone}) texts a code; verifyOtp({type: 'sms'}) signs the new user in, once", async () => {
    const supabase = supabaseClient(svc);
    const phone = uniquePhone();
    expect(
      (await supabase.auth.signInWithOtp({ phone, options: { data: { plan: "pro" } } })).error,
    ).toBeNull();
    const code = (await textedCode(phone))!;
    const verified = await supabase.auth.verifyOtp({ phone, token: code, type: "sms" });
    expect(verified.error).toBeNull();
    expect(verified.data.user).toMatchObject({ phone, user_metadata: { plan: "pro" } });
    expect(verified.data.user?.phone_confirmed_at).toBeTruthy();
    expect(verified.data.session?.token_type).toBe("bearer");
    // Threat: replay of the code.
    const again = await supabaseClient(svc).auth.verifyOtp({ phone, token: code, type: "sms" });
    expect(again.error).toMatchObject({ status: 403, code: "otp_expired" });
  });

  it("shouldCreateUser: false and resend({type: 'sms'}) answer an unknown number as a known one and text nothing", async () => {
    const supabase = supabaseClient(svc);
    const unknown = uniquePhone();
    expect(
      (await supabase.auth.signInWithOtp({ phone: unknown, options: { shouldCreateUser: false } })).error,
    ).toBeNull();
    expect((await supabase.auth.resend({ type: "sms", phone: unknown })).error).toBeNull();
    expect(await textedCode(unknown)).toBeUndefined();

    const known = uniquePhone();
    await supabase.auth.signInWithOtp({ phone: known });
    const first = (await textedCode(known))!;
    expect((await supabase.auth.resend({ type: "sms", phone: known })).error).toBeNull();
    const second = (await textedCode(known))!;
    // The resent code replaces the first (one code per number).
    const verified = await supabase.auth.verifyOtp({ phone: known, token: second, type: "sms" });
    expect(verified.error).toBeNull();
    if (first !== second) {
      const old = await supabaseClient(svc).auth.verifyOtp({ phone: known, token: first, type: "sms" });
      expect(old.error).toMatchObject({ status: 403, code: "otp_expired" });
    }
  });
});
