import { describe, expect, it } from "vitest";
import { type Mail, mailbox, PASSWORD, uniqueEmail } from "../../helpers";
import { supabaseClient, supabaseService } from "./support";

/**
 * `updateUser({email})` on the Supabase face (contract supabase.md §2), driven by the real `@supabase/supabase-js`:
 * the core's email change, its mail in GoTrue's form to the new address, confirmed by `verifyOtp({type:
 * 'email_change'})` or by the link.
 */

const WELCOME = "http://localhost:3000/welcome";
const svc = supabaseService({ AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: WELCOME });

function linkAndCode(mail: Mail): { link: URL; code: string } {
  const link = /(http\S+\/supabase\/auth\/v1\/verify\?\S+)/.exec(mail.text)![1]!;
  return { link: new URL(link), code: /(\d{6})\s*$/.exec(mail.text.trim())![1]! };
}

async function signedInClient(email: string) {
  const supabase = supabaseClient(svc);
  await supabase.auth.signUp({ email, password: PASSWORD });
  await supabase.auth.signInWithPassword({ email, password: PASSWORD });
  return supabase;
}

describe("updateUser({email}) and the email_change mail", () => {
  it("mails GoTrue's link and code to the new address; verifyOtp({type: 'email_change'}) makes it the account's", async () => {
    const [old, next] = [uniqueEmail("change-old"), uniqueEmail("change-new")];
    const supabase = await signedInClient(old);
    const updated = await supabase.auth.updateUser({ email: next }, { emailRedirectTo: WELCOME });
    expect(updated.error).toBeNull();
    expect(updated.data.user).toMatchObject({ email: old, new_email: next });
    // The address changes only once the new one is proven (a typo cannot lock the user out).
    expect(await mailbox(svc, old)).toEqual([]);
    const { link, code } = linkAndCode((await mailbox(svc, next))[0]!);
    expect(link.searchParams.get("type")).toBe("email_change");
    expect(link.searchParams.get("redirect_to")).toBe(WELCOME);

    // Threat: a token of another type. The change's code is no sign-in code.
    const asEmail = await supabaseClient(svc).auth.verifyOtp({ email: next, token: code, type: "email" });
    expect(asEmail.error).toMatchObject({ status: 403, code: "otp_expired" });
    // The code, spent on the wrong type, is gone; the link of the same mail still confirms.
    const response = await svc.request("GET", link.toString());
    expect(response.status).toBe(303);
    const fragment = new URLSearchParams(new URL(response.headers.get("location")!).hash.slice(1));
    expect(fragment.get("type")).toBe("email_change");
    const after = supabaseClient(svc);
    await after.auth.setSession({
      access_token: fragment.get("access_token")!,
      refresh_token: fragment.get("refresh_token")!,
    });
    expect((await after.auth.getUser()).data.user?.email).toBe(next);
    expect(
      (await supabaseClient(svc).auth.signInWithPassword({ email: next, password: PASSWORD })).error,
    ).toBeNull();
  });

  it("verifyOtp({email: <new>, token, type: 'email_change'}) confirms; the same code again is refused", async () => {
    const [old, next] = [uniqueEmail("otp-old"), uniqueEmail("otp-new")];
    const supabase = await signedInClient(old);
    expect((await supabase.auth.updateUser({ email: next })).error).toBeNull();
    const { code } = linkAndCode((await mailbox(svc, next))[0]!);
    const verified = await supabaseClient(svc).auth.verifyOtp({
      email: next,
      token: code,
      type: "email_change",
    });
    expect(verified.error).toBeNull();
    expect(verified.data.user?.email).toBe(next);
    // Threat: replay of the change's code.
    const again = await supabaseClient(svc).auth.verifyOtp({
      email: next,
      token: code,
      type: "email_change",
    });
    expect(again.error).toMatchObject({ status: 403, code: "otp_expired" });
  });

  // Threat: an unproven address made the account's. The session's holder asks for A (their own), then B (someone
  // else's, whose mail they never read), and presents A's code with A's address: it named "the user's change", so it
  // redeemed B's ticket and B became the account's verified email. A code now redeems only the ticket it came with.
  it("a code mailed for a change the user then replaced confirms nothing: not the newer change to another address", async () => {
    const [old, a, b] = [uniqueEmail("replaced-old"), uniqueEmail("replaced-a"), uniqueEmail("replaced-b")];
    const supabase = await signedInClient(old);
    expect((await supabase.auth.updateUser({ email: a })).error).toBeNull();
    const codeOfA = linkAndCode((await mailbox(svc, a))[0]!).code;
    expect((await supabase.auth.updateUser({ email: b })).error).toBeNull();

    const stale = await supabaseClient(svc).auth.verifyOtp({
      email: a,
      token: codeOfA,
      type: "email_change",
    });
    expect(stale.error).toMatchObject({ status: 403, code: "otp_expired" });
    expect((await supabase.auth.getUser()).data.user?.email).toBe(old);
    // B's own code, from B's mail, still confirms B.
    const codeOfB = linkAndCode((await mailbox(svc, b))[0]!).code;
    const confirmed = await supabaseClient(svc).auth.verifyOtp({
      email: b,
      token: codeOfB,
      type: "email_change",
    });
    expect(confirmed.error).toBeNull();
    expect(confirmed.data.user?.email).toBe(b);
  });

  it("an address another account holds is GoTrue's 422", async () => {
    const [mine, theirs] = [uniqueEmail("mine"), uniqueEmail("theirs")];
    await supabaseClient(svc).auth.signUp({ email: theirs, password: PASSWORD });
    const supabase = await signedInClient(mine);
    const taken = await supabase.auth.updateUser({ email: theirs });
    expect(taken.error).toMatchObject({ status: 422 });
    expect(await mailbox(svc, theirs)).toEqual([]);
  });
});
