import { describe, expect, it } from "vitest";
import { mailbox, PASSWORD, uniqueEmail } from "../../helpers";
import { FACE, SECRET_KEY, supabaseClient, supabaseService } from "./support";

/**
 * auth-js's admin links on the Supabase face (contract supabase.md §2), with the secret key: `inviteUserByEmail`
 * (a user made and an invitation mailed in GoTrue's form) and `generateLink` (the same ticket and code a mail would
 * carry, handed to the operator instead). Client keys are refused.
 */

const svc = supabaseService();
const admin = () => supabaseClient(svc, SECRET_KEY).auth.admin;

describe("auth.admin.inviteUserByEmail", () => {
  it("makes the user and mails an invitation with GoTrue's link and code; verifyOtp({type: 'invite'}) signs in", async () => {
    const email = uniqueEmail("invited");
    const invited = await admin().inviteUserByEmail(email, { data: { team: "blue" } });
    expect(invited.error).toBeNull();
    expect(invited.data.user).toMatchObject({ email, user_metadata: { team: "blue" } });
    const [mail] = await mailbox(svc, email);
    expect(mail!.subject).toBe("You are invited");
    const link = new URL(/(http\S+\/supabase\/auth\/v1\/verify\?\S+)/.exec(mail!.text)![1]!);
    expect(link.searchParams.get("type")).toBe("invite");
    const code = /(\d{6})\s*$/.exec(mail!.text.trim())![1]!;
    const verified = await supabaseClient(svc).auth.verifyOtp({ email, token: code, type: "invite" });
    expect(verified.error).toBeNull();
    expect(verified.data.user?.email_confirmed_at).toBeTruthy();
    // Confirmed now: inviting the address again is GoTrue's 422.
    expect((await admin().inviteUserByEmail(email)).error).toMatchObject({
      status: 422,
      code: "email_exists",
    });
  });

  it("a client key is no service role: inviteUserByEmail and generateLink are refused, nothing is mailed", async () => {
    const email = uniqueEmail("not-invited");
    const client = supabaseClient(svc).auth.admin;
    expect((await client.inviteUserByEmail(email)).error).toMatchObject({ status: 403, code: "not_admin" });
    const link = await client.generateLink({ type: "magiclink", email });
    expect(link.error).toMatchObject({ status: 403, code: "not_admin" });
    expect(await mailbox(svc, email)).toEqual([]);
  });
});

describe("auth.admin.generateLink", () => {
  it("magiclink: GoTrue's properties, no mail; the hashed_token signs in once, the link and code with it", async () => {
    const email = uniqueEmail("generated");
    await supabaseClient(svc).auth.signUp({ email, password: PASSWORD });
    const { data, error } = await admin().generateLink({ type: "magiclink", email });
    expect(error).toBeNull();
    expect(data.user?.email).toBe(email);
    expect(data.properties).toMatchObject({
      verification_type: "magiclink",
      email_otp: expect.stringMatching(/^\d{6}$/),
      redirect_to: "http://localhost:3000",
    });
    expect(data.properties?.action_link.startsWith(`${FACE}/auth/v1/verify?token=`)).toBe(true);
    expect(await mailbox(svc, email)).toEqual([]);
    const hash = data.properties!.hashed_token;
    const verified = await supabaseClient(svc).auth.verifyOtp({ token_hash: hash, type: "magiclink" });
    expect(verified.error).toBeNull();
    // Threat: replay. The code of the same link is spent with it.
    const code = data.properties!.email_otp;
    const again = await supabaseClient(svc).auth.verifyOtp({ email, token: code, type: "magiclink" });
    expect(again.error).toMatchObject({ status: 403, code: "otp_expired" });
  });

  it("signup makes the user with its password; recovery of an unknown address is 404; email_change_new confirms the change", async () => {
    const email = uniqueEmail("gen-signup");
    const signup = await admin().generateLink({ type: "signup", email, password: PASSWORD });
    expect(signup.data.properties?.verification_type).toBe("signup");
    const code = signup.data.properties!.email_otp;
    expect(
      (await supabaseClient(svc).auth.verifyOtp({ email, token: code, type: "signup" })).error,
    ).toBeNull();
    expect(
      (await supabaseClient(svc).auth.signInWithPassword({ email, password: PASSWORD })).error,
    ).toBeNull();

    const unknown = await admin().generateLink({ type: "recovery", email: uniqueEmail("gen-nobody") });
    expect(unknown.error).toMatchObject({ status: 404, code: "user_not_found" });

    const newEmail = uniqueEmail("gen-new");
    const change = await admin().generateLink({ type: "email_change_new", email, newEmail });
    expect(change.error).toBeNull();
    expect(change.data.properties?.verification_type).toBe("email_change_new");
    const hash = change.data.properties!.hashed_token;
    const changed = await supabaseClient(svc).auth.verifyOtp({ token_hash: hash, type: "email_change" });
    expect(changed.error).toBeNull();
    expect(changed.data.user?.email).toBe(newEmail);

    const current = await admin().generateLink({
      type: "email_change_current",
      email: newEmail,
      newEmail: email,
    });
    expect(current.error).toMatchObject({ status: 400, code: "validation_failed" });
  });
});
