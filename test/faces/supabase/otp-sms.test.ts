import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../../src/lib/crypto";
import { auditTypesOf, PASSWORD } from "../../helpers";
import { eachStatementFailingOnce } from "../../support/faults";
import { uniquePhone } from "../../support/phones";
import { directoryOwner } from "../../support/shards";
import { FACE, PUBLISHABLE_KEY, supabaseClient, supabaseService } from "./support";

/**
 * The Supabase face's SMS codes (contract supabase.md §2), driven by the real `@supabase/supabase-js`:
 * `signInWithOtp({phone})`, `verifyOtp({phone, token, type: 'sms'})` and `resend({type: 'sms'})`, over the core's SMS
 * sign-in (its codes, caps and lockout), and a phone number as a password's identifier (`signUp`, `signInWithPassword`). The development transport gives the texted code.
 */

const svc = supabaseService({ AUTH_SMS_PASSWORDLESS_ENABLED: "true", AUTH_DEV_SMS: "true" });

/** Without its `+`, as supabase-js takes a number. */
const localPhone = () => uniquePhone().slice(1);

async function textedCode(phone: string): Promise<string | undefined> {
  const response = await svc.get(`/dev/sms?to=${encodeURIComponent(`+${phone}`)}`);
  const [sms] = (await response.json()) as { body: string }[];
  return sms && /\b(\d{6})\b/.exec(sms.body)?.[1];
}

describe("signInWithOtp and verifyOtp by phone", () => {
  it("GET /settings says the phone provider is on with the SMS sign-in", async () => {
    const response = await svc.request("GET", `${FACE}/auth/v1/settings`, {
      headers: { apikey: PUBLISHABLE_KEY },
    });
    expect(((await response.json()) as { external: { phone: boolean } }).external.phone).toBe(true);
  });

  it("signInWithOtp({phone}) texts a code; verifyOtp({type: 'sms'}) signs the new user in, once", async () => {
    const supabase = supabaseClient(svc);
    const phone = localPhone();
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
    const unknown = localPhone();
    expect(
      (await supabase.auth.signInWithOtp({ phone: unknown, options: { shouldCreateUser: false } })).error,
    ).toBeNull();
    expect((await supabase.auth.resend({ type: "sms", phone: unknown })).error).toBeNull();
    expect(await textedCode(unknown)).toBeUndefined();

    const known = localPhone();
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

describe("signUp and signInWithPassword with a phone number", () => {
  it("signUp({phone, password}) texts a code and no session; verifyOtp confirms; then the password signs in", async () => {
    const supabase = supabaseClient(svc);
    const phone = localPhone();
    const signedUp = await supabase.auth.signUp({
      phone,
      password: PASSWORD,
      options: { data: { plan: "pro" } },
    });
    expect(signedUp.error).toBeNull();
    expect(signedUp.data.session).toBeNull();
    expect(signedUp.data.user).toMatchObject({ phone, user_metadata: { plan: "pro" } });
    // Not proven yet: the password does not sign in.
    const early = await supabase.auth.signInWithPassword({ phone, password: PASSWORD });
    expect(early.error).toMatchObject({ status: 400, code: "phone_not_confirmed" });
    const code = (await textedCode(phone))!;
    expect((await supabase.auth.verifyOtp({ phone, token: code, type: "sms" })).error).toBeNull();
    const signedIn = await supabaseClient(svc).auth.signInWithPassword({
      phone: `+${phone}`,
      password: PASSWORD,
    });
    expect(signedIn.error).toBeNull();
    expect(signedIn.data.user?.phone).toBe(phone);
    const wrong = await supabaseClient(svc).auth.signInWithPassword({ phone, password: "not the password" });
    expect(wrong.error).toMatchObject({ status: 400, code: "invalid_credentials" });
    // A taken number is GoTrue's 422.
    const again = await supabaseClient(svc).auth.signUp({ phone, password: PASSWORD });
    expect(again.error).toMatchObject({ status: 422, code: "phone_exists" });
  });

  it("a password set on a number its owner never proved does not survive the owner's first sign-in by code", async () => {
    // Threat: account pre-hijacking. Someone signs up a number that is not theirs with a password and waits.
    const phone = localPhone();
    await supabaseClient(svc).auth.signUp({ phone, password: PASSWORD });
    // The owner, later, signs in with a texted code (a sign-in code, not the sign-up's confirmation).
    const owner = supabaseClient(svc);
    await owner.auth.signInWithOtp({ phone });
    expect(
      (await owner.auth.verifyOtp({ phone, token: (await textedCode(phone))!, type: "sms" })).error,
    ).toBeNull();
    const intruder = await supabaseClient(svc).auth.signInWithPassword({ phone, password: PASSWORD });
    expect(intruder.error).toMatchObject({ status: 400, code: "invalid_credentials" });
  });
});

describe("updateUser({phone}) and verifyOtp({type: 'phone_change'})", () => {
  it("texts the new number a code; the number changes when it comes back, once; a taken number is 422", async () => {
    const [before, after] = [localPhone(), localPhone()];
    const supabase = supabaseClient(svc);
    await supabase.auth.signInWithOtp({ phone: before });
    await supabase.auth.verifyOtp({ phone: before, token: (await textedCode(before))!, type: "sms" });
    const updated = await supabase.auth.updateUser({ phone: after });
    expect(updated.error).toBeNull();
    expect(updated.data.user).toMatchObject({ phone: before, new_phone: after });
    const code = (await textedCode(after))!;
    // Threat: a token of another type. The change's code is no sign-in code for the new number.
    const asSignIn = await supabaseClient(svc).auth.verifyOtp({ phone: after, token: code, type: "sms" });
    expect(asSignIn.error).toMatchObject({ status: 403, code: "otp_expired" });
    const changed = await supabase.auth.verifyOtp({ phone: after, token: code, type: "phone_change" });
    expect(changed.error).toBeNull();
    expect(changed.data.user?.phone).toBe(after);
    // Threat: replay.
    const again = await supabaseClient(svc).auth.verifyOtp({
      phone: after,
      token: code,
      type: "phone_change",
    });
    expect(again.error).toMatchObject({ status: 403, code: "otp_expired" });
    // The number is the account's now: another account asking for it is refused, and nothing is texted.
    const other = supabaseClient(svc);
    const third = localPhone();
    await other.auth.signInWithOtp({ phone: third });
    await other.auth.verifyOtp({ phone: third, token: (await textedCode(third))!, type: "sms" });
    expect((await other.auth.updateUser({ phone: after })).error).toMatchObject({
      status: 422,
      code: "phone_exists",
    });
  });
});

describe("verifyOtp({type: 'phone_change'}) with D1 failing once at each statement", () => {
  const phoneOwner = async (phone: string) => directoryOwner(await sha256Hex(`phone:+${phone}`));
  const confirm = (face: ReturnType<typeof supabaseService>, phone: string, token: string) =>
    face.request("POST", `${FACE}/auth/v1/verify`, {
      headers: { apikey: PUBLISHABLE_KEY, "content-type": "application/json" },
      body: JSON.stringify({ phone, token, type: "phone_change" }),
    });
  /** A user signed in by the number `before`, who asked for `after`: the code texted to `after`. */
  const pendingChange = async () => {
    const [before, after] = [localPhone(), localPhone()];
    const supabase = supabaseClient(svc);
    await supabase.auth.signInWithOtp({ phone: before });
    const signedIn = await supabase.auth.verifyOtp({
      phone: before,
      token: (await textedCode(before))!,
      type: "sms",
    });
    expect(signedIn.error).toBeNull();
    expect((await supabase.auth.updateUser({ phone: after })).error).toBeNull();
    // The old number is the user's in the directory: that it is given back below is the change's doing.
    expect(await phoneOwner(before)).toBe(signedIn.data.user!.id);
    return { before, after, userId: signedIn.data.user!.id, code: (await textedCode(after))! };
  };

  // Threat: a fault after the texted code was redeemed (the user's read, the directory, the row, the grants, the
  // session) answered 503 with the code spent: the retry the 503 asks for was refused (403 otp_expired) and the person
  // had to ask for another text. And a retry that found the number already changed gave it back in the directory
  // (added and removed at once): the number unclaimed, free for a user of the other shard.
  it("a 503, after which the same code changes the number, once, the directory following", async () => {
    let faults = 0;
    await eachStatementFailingOnce(
      env,
      async (bindings) => {
        const change = await pendingChange();
        expect(
          (await confirm(supabaseService({ ...svc.env, ...bindings }), change.after, change.code)).status,
        ).toBe(200);
      },
      async (bindings, context) => {
        const failing = supabaseService({ ...svc.env, ...bindings });
        const { before, after, userId, code } = await pendingChange();
        const answer = await confirm(failing, after, code);
        if (answer.status === 200) return;
        expect(answer.status, `${context}: ${await answer.text()}`).toBe(503);
        faults++;
        const retry = await confirm(failing, after, code);
        expect(retry.status, `${context}: ${await retry.clone().text()}`).toBe(200);
        expect(((await retry.json()) as { user: { phone: string } }).user.phone, context).toBe(after);
        expect(
          (await auditTypesOf(userId)).filter((type) => type === "phone.change"),
          context,
        ).toHaveLength(1);
        expect(await phoneOwner(after), `${context}: the new number's key`).toBe(userId);
        expect(await phoneOwner(before), `${context}: the old number's key`).toBeNull();
        // Spent now: the put-back gave the code one more use, not two.
        expect((await confirm(failing, after, code)).status, context).toBe(403);
      },
    );
    expect(faults).toBeGreaterThan(1);
  }, 120_000);

  // Threat: a put-back wider than faults, giving a refused code more tries: a refusal keeps the code spent.
  it("a number another account took meanwhile is refused, and the code is spent with the refusal", async () => {
    const { after, code } = await pendingChange();
    const taker = supabaseClient(svc);
    await taker.auth.signInWithOtp({ phone: after });
    expect(
      (await taker.auth.verifyOtp({ phone: after, token: (await textedCode(after))!, type: "sms" })).error,
    ).toBeNull();
    const refused = await confirm(svc, after, code);
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { error_code: string }).error_code).toBe("phone_exists");
    expect((await confirm(svc, after, code)).status).toBe(403);
  });
});
