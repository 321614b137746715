// The Supabase face as a supabase-js app meets it (contract supabase.md §1–2): the real `@supabase/supabase-js`,
// unchanged but for its URL and key, against `wrangler dev` over HTTP. The account is confirmed through the mailed
// link (GoTrue's `/verify`, which lands on the app with the session in the fragment), then signs in, refreshes, reads
// itself, changes its data and signs out; the operator's admin namespace works with the secret key from a server.
import { createClient } from "@supabase/supabase-js";
import { describe, expect, inject, it } from "vitest";
import { followGoTrueLink, mailedLink, PASSWORD, serverUrl, uniqueEmail } from "./client";

const keys = inject("supabaseKeys");
const options = { auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false } };

describe("a supabase-js app against wrangler dev", () => {
  it("signUp, confirm by mail, signInWithPassword, refreshSession, getUser, updateUser, signOut", async () => {
    const supabase = createClient(`${serverUrl}/supabase`, keys.publishable, options);
    const email = uniqueEmail("supabase-js");
    const signedUp = await supabase.auth.signUp({
      email,
      password: PASSWORD,
      options: { data: { plan: "free" } },
    });
    expect(signedUp.error).toBeNull();
    // Confirmation required (the server's default): a user, no session, and a mail.
    expect(signedUp.data.session).toBeNull();
    expect(signedUp.data.user?.email).toBe(email);
    const unconfirmed = await supabase.auth.signInWithPassword({ email, password: PASSWORD });
    expect(unconfirmed.error).toMatchObject({ status: 400, code: "email_not_confirmed" });
    const landed = await followGoTrueLink(await mailedLink(email));
    expect(new URLSearchParams(landed.hash.slice(1)).get("type")).toBe("signup");

    const signedIn = await supabase.auth.signInWithPassword({ email, password: PASSWORD });
    expect(signedIn.error).toBeNull();
    expect(signedIn.data.user?.email_confirmed_at).toEqual(expect.any(String));
    const refreshed = await supabase.auth.refreshSession();
    expect(refreshed.error).toBeNull();
    expect((await supabase.auth.getUser()).data.user?.user_metadata).toEqual({ plan: "free" });
    const updated = await supabase.auth.updateUser({ data: { plan: "pro" } });
    expect(updated.data.user?.user_metadata).toEqual({ plan: "pro" });
    const claims = await supabase.auth.getClaims();
    expect(claims.data?.claims).toMatchObject({ role: "authenticated", email });
    expect((await supabase.auth.signOut()).error).toBeNull();
  });

  it("auth.admin with the secret key from a server: createUser confirmed, the user signs in, deleteUser", async () => {
    const admin = createClient(`${serverUrl}/supabase`, keys.secret, options);
    const email = uniqueEmail("supabase-admin");
    const made = await admin.auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
    expect(made.error).toBeNull();
    const client = createClient(`${serverUrl}/supabase`, keys.publishable, options);
    expect((await client.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    expect((await admin.auth.admin.deleteUser(made.data.user!.id)).error).toBeNull();
  });
});
