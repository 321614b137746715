import { describe, expect, it } from "vitest";
import { mailbox, PASSWORD, uniqueEmail } from "../../helpers";
import { supabaseClient, supabaseService } from "./support";

/**
 * `reauthenticate` and `updateUser({password, nonce})` on the Supabase face (contract supabase.md §2) under
 * `AUTH_REQUIRE_ELEVATED_CLAIM=required`, driven by the real `@supabase/supabase-js`: the code mailed to the
 * account's own verified address is the proof a password change needs.
 */

const svc = supabaseService({ AUTH_REQUIRE_ELEVATED_CLAIM: "required" });

const NEW_PASSWORD = "a new horse battery";
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

/** A signed-in client of a user whose address is verified (by a mailed sign-up confirmation). */
async function verifiedUser() {
  const email = uniqueEmail("reauth");
  const supabase = supabaseClient(svc);
  await supabase.auth.signUp({ email, password: PASSWORD });
  await supabase.auth.resend({ type: "signup", email });
  const code = /(\d{6})\s*$/.exec((await mailbox(svc, email))[0]!.text.trim())![1]!;
  expect((await supabase.auth.verifyOtp({ email, token: code, type: "signup" })).error).toBeNull();
  return { email, supabase };
}

describe("reauthenticate and updateUser({password, nonce})", () => {
  it("without a nonce the change is refused; reauthenticate mails a code that lets it through, once", async () => {
    const { email, supabase } = await verifiedUser();
    const bare = await supabase.auth.updateUser({ password: NEW_PASSWORD });
    expect(bare.error).toMatchObject({ status: 400, code: "reauthentication_needed" });

    expect((await supabase.auth.reauthenticate()).error).toBeNull();
    const [mail] = await mailbox(svc, email);
    expect(mail!.subject).toBe("Confirm it is you");
    const nonce = /\b(\d{6})\b/.exec(mail!.text)![1]!;
    // Threat: a guessed nonce.
    const guessed = await supabase.auth.updateUser({ password: NEW_PASSWORD, nonce: wrong(nonce) });
    expect(guessed.error).toMatchObject({ status: 422, code: "reauthentication_not_valid" });
    expect((await supabase.auth.updateUser({ password: NEW_PASSWORD, nonce })).error).toBeNull();
    expect(
      (await supabaseClient(svc).auth.signInWithPassword({ email, password: NEW_PASSWORD })).error,
    ).toBeNull();
    // Threat: replay. The nonce is spent.
    const replay = await supabase.auth.updateUser({ password: "yet another horse battery", nonce });
    expect(replay.error).toMatchObject({ status: 422, code: "reauthentication_not_valid" });
  });

  it("an unverified address gets no code (it may be anyone's): GoTrue's 422 email_not_confirmed", async () => {
    const email = uniqueEmail("reauth-unverified");
    const supabase = supabaseClient(svc);
    await supabase.auth.signUp({ email, password: PASSWORD });
    const refused = await supabase.auth.reauthenticate();
    expect(refused.error).toMatchObject({ status: 422, code: "email_not_confirmed" });
    expect(await mailbox(svc, email)).toEqual([]);
  });
});
