import { env } from "cloudflare:test";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import type { SupabaseClient } from "@supabase/supabase-js";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../../src/auth/mfa/totp";
import { mailbox, PASSWORD, uniqueAddress, uniqueEmail } from "../../helpers";
import { eachStatementFailingOnce } from "../../support/faults";
import { userD1 } from "../../support/shards";
import { FACE, PUBLISHABLE_KEY, SECRET_KEY, supabaseClient, supabaseService } from "./support";

/**
 * auth-js's `mfa` namespace with TOTP (contract supabase.md §2, "Factors"), driven by the real supabase-js: enroll,
 * challenge, verify, challengeAndVerify, listFactors, getAuthenticatorAssuranceLevel, unenroll, and GoTrue's aal1
 * session for a TOTP user's password sign-in, stepped up to aal2. One factor behind both faces.
 */

const svc = supabaseService({
  AUTH_MFA_ENABLED: "true",
  AUTH_MFA_TOTP_ISSUER: "Acme",
  AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
});
const HASURA = "https://hasura.io/jwt/claims";

const codeOf = (secret: string) => totpCode(decodeBase32IgnorePadding(secret), totpStep(Date.now()));
/** A code is used once (replay refused); a test that needs another lets the service forget the step accepted. */
const forgetLastStep = (userId: string) =>
  userD1(userId).prepare("UPDATE users SET totp_last_step = NULL WHERE id = ?").bind(userId).run();

/** A client of its own address (the per-address limits count each test apart). */
const client = () => supabaseClient(svc, undefined, { "cf-connecting-ip": uniqueAddress() });

/** A user signed up through the face, with a verified TOTP factor made through it. */
async function userWithTotp(supabase: SupabaseClient = client(), existing?: string) {
  const email = existing ?? uniqueEmail("sbmfa");
  const signedUp = existing
    ? await supabase.auth.signInWithPassword({ email, password: PASSWORD })
    : await supabase.auth.signUp({ email, password: PASSWORD });
  expect(signedUp.error).toBeNull();
  const enrolled = await supabase.auth.mfa.enroll({ factorType: "totp", friendlyName: "phone app" });
  expect(enrolled.error).toBeNull();
  const { id, totp } = enrolled.data as { id: string; totp: { secret: string } };
  const verified = await supabase.auth.mfa.challengeAndVerify({ factorId: id, code: codeOf(totp.secret) });
  expect(verified.error).toBeNull();
  const userId = signedUp.data.user!.id;
  await forgetLastStep(userId);
  return { supabase, email, userId, factorId: id, secret: totp.secret };
}

describe("auth-js mfa with TOTP", () => {
  it("mfa.enroll, mfa.challengeAndVerify (MFA_CHALLENGE_VERIFIED), mfa.listFactors, getAuthenticatorAssuranceLevel", async () => {
    const supabase = client();
    const email = uniqueEmail("sbenroll");
    await supabase.auth.signUp({ email, password: PASSWORD });
    const enrolled = await supabase.auth.mfa.enroll({ factorType: "totp", friendlyName: "laptop" });
    expect(enrolled.error).toBeNull();
    const data = enrolled.data as {
      id: string;
      type: string;
      friendly_name: string;
      totp: { uri: string; qr_code: string; secret: string };
    };
    expect(data).toMatchObject({ type: "totp", friendly_name: "laptop" });
    expect(data.totp.uri).toMatch(/^otpauth:\/\/totp\/Acme:/);
    expect(data.totp.qr_code).toMatch(/^data:image\/svg\+xml;utf-8,<svg/);
    // Threat: an issuer the otpauth:// URI cannot encode (a lone surrogate) threw while the URI was made: a 500.
    const malformed = await supabase.auth.mfa.enroll({ factorType: "totp", issuer: "\ud800" });
    expect(malformed.error).toMatchObject({ status: 400, code: "validation_failed" });
    // Not verified yet: listed as unverified, and the session stays at aal1 with nothing to step up to.
    const before = await supabase.auth.mfa.listFactors();
    expect(before.data?.all).toEqual([expect.objectContaining({ id: data.id, status: "unverified" })]);
    expect(before.data?.totp).toEqual([]);

    const events: string[] = [];
    supabase.auth.onAuthStateChange((event) => events.push(event));
    const verified = await supabase.auth.mfa.challengeAndVerify({
      factorId: data.id,
      code: codeOf(data.totp.secret),
    });
    expect(verified.error).toBeNull();
    expect(events).toContain("MFA_CHALLENGE_VERIFIED");
    const claims = decodeJwt(verified.data!.access_token);
    expect(claims).toMatchObject({ aal: "aal2", amr: [{ method: "totp" }] });
    expect(claims[HASURA]).toBeDefined();

    const after = await supabase.auth.mfa.listFactors();
    expect(after.data?.totp).toEqual([
      expect.objectContaining({
        id: data.id,
        factor_type: "totp",
        status: "verified",
        friendly_name: "laptop",
      }),
    ]);
    const aal = await supabase.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(aal.data).toMatchObject({ currentLevel: "aal2", nextLevel: "aal2" });

    // One factor behind both faces: the Nhost face's password sign-in now asks the TOTP step.
    const nhost = await svc.post("/signin/email-password", { email, password: PASSWORD });
    expect(await nhost.json()).toMatchObject({
      session: null,
      mfa: { ticket: expect.stringMatching(/^mfaTotp:/) },
    });
  });

  it("signInWithPassword gives a TOTP user an aal1 session; mfa.challengeAndVerify steps it up to aal2", async () => {
    const { email, factorId, secret } = await userWithTotp();
    const supabase = client();
    const signedIn = await supabase.auth.signInWithPassword({ email, password: PASSWORD });
    expect(signedIn.error).toBeNull();
    const first = signedIn.data.session!;
    const claims = decodeJwt(first.access_token);
    expect(claims).toMatchObject({ aal: "aal1", amr: [{ method: "password" }] });
    // Threat: a password alone reaching Hasura. The aal1 token carries no Hasura claims, so Hasura refuses it.
    expect(claims[HASURA]).toBeUndefined();
    const aal = await supabase.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(aal.data).toMatchObject({ currentLevel: "aal1", nextLevel: "aal2" });

    // Threat: the Nhost face weakened. The aal1 session's refresh token renews nothing there.
    const viaNhost = await svc.post("/token", { refreshToken: first.refresh_token });
    expect(viaNhost.status).toBe(401);
    expect((await svc.get("/user", first.access_token)).status).toBe(401);

    const { data: factors } = await supabase.auth.mfa.listFactors();
    expect(factors?.totp.map((f) => f.id)).toEqual([factorId]);
    const stepped = await supabase.auth.mfa.challengeAndVerify({ factorId, code: codeOf(secret) });
    expect(stepped.error).toBeNull();
    const second = decodeJwt(stepped.data!.access_token);
    expect(second).toMatchObject({ aal: "aal2" });
    expect(second[HASURA]).toBeDefined();
    // The aal1 session it replaced is over; the new one refreshes on both faces at aal2.
    expect(
      (await supabaseClient(svc).auth.refreshSession({ refresh_token: first.refresh_token })).error,
    ).not.toBeNull();
    const refreshed = await supabase.auth.refreshSession();
    expect(decodeJwt(refreshed.data.session!.access_token)).toMatchObject({ aal: "aal2" });
    const nhostRefresh = await svc.post("/token", { refreshToken: refreshed.data.session!.refresh_token });
    expect(nhostRefresh.status).toBe(200);
  });

  // Threat: a way in that claims more than it proved. A mailed code or link gives a TOTP user an aal1 session that
  // auth-js steps up (nextLevel aal2), never an aal2 one. (Its Hasura claims are the Nhost face's for the same
  // magic link: the core asks no second factor after a mailed link on either face.)
  it("signInWithOtp then verifyOtp, and the mailed link, give a TOTP user an aal1 session to step up", async () => {
    // An address proven before TOTP was set up: a first proof by a mailed code would otherwise drop the factor (the
    // pre-hijacking rule of src/auth/credential-reset.ts), which is not what this test is about.
    const email = uniqueEmail("sbotpmfa");
    const admin = supabaseClient(svc, SECRET_KEY);
    expect(
      (await admin.auth.admin.createUser({ email, password: PASSWORD, email_confirm: true })).error,
    ).toBeNull();
    await userWithTotp(client(), email);
    const supabase = client();
    expect(
      (await supabase.auth.signInWithOtp({ email, options: { shouldCreateUser: false } })).error,
    ).toBeNull();
    const [mail] = await mailbox(svc, email);
    const code = /(\d{6})\s*$/.exec(mail!.text.trim())![1]!;
    const link = /(http\S+\/supabase\/auth\/v1\/verify\?\S+)/.exec(mail!.text)![1]!;
    const verified = await supabase.auth.verifyOtp({ email, token: code, type: "email" });
    expect(verified.error).toBeNull();
    expect(decodeJwt(verified.data.session!.access_token)).toMatchObject({ aal: "aal1" });
    expect((await supabase.auth.mfa.getAuthenticatorAssuranceLevel()).data).toMatchObject({
      currentLevel: "aal1",
      nextLevel: "aal2",
    });

    await supabase.auth.signInWithOtp({ email, options: { shouldCreateUser: false } });
    const [second] = await mailbox(svc, email);
    const secondLink = /(http\S+\/supabase\/auth\/v1\/verify\?\S+)/.exec(second!.text)![1]!;
    expect(secondLink).not.toBe(link);
    const landed = await svc.request("GET", secondLink);
    expect(landed.status).toBe(303);
    const fragment = new URLSearchParams(new URL(landed.headers.get("location")!).hash.slice(1));
    expect(decodeJwt(fragment.get("access_token")!)).toMatchObject({ aal: "aal1" });
  });

  it("migration 0027 names an existing TOTP secret as a verified factor, which mfa.listFactors lists as it is", async () => {
    const email = uniqueEmail("migrated");
    const signUp = await svc.post("/signup/email-password", { email, password: PASSWORD });
    const { session } = (await signUp.json()) as { session: { accessToken: string; user: { id: string } } };
    const userId = session.user.id;
    const generated = (await (await svc.get("/mfa/totp/generate", session.accessToken)).json()) as {
      totpSecret: string;
    };
    await svc.post(
      "/user/mfa",
      { code: codeOf(generated.totpSecret), activeMfaType: "totp" },
      session.accessToken,
    );
    // As before the migration: the secret on the user's row, no factor row.
    const db = userD1(userId);
    await db.prepare("DELETE FROM mfa_factors WHERE user_id = ?").bind(userId).run();
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0027_"))!;
    const insert = migration.queries.find((q) => q.includes("INSERT INTO `mfa_factors`"))!;
    // The migration's own statement, narrowed to this user (the test database holds other files' users).
    await db
      .prepare(
        insert.replace("WHERE `totp_secret` IS NOT NULL", "WHERE `totp_secret` IS NOT NULL AND `id` = ?"),
      )
      .bind(userId)
      .run();
    const row = await db
      .prepare("SELECT id, status FROM mfa_factors WHERE user_id = ?")
      .bind(userId)
      .first<{ id: string; status: string }>();
    expect(row).toMatchObject({
      status: "verified",
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
    });

    const supabase = client();
    await supabase.auth.signInWithPassword({ email, password: PASSWORD });
    const { data } = await supabase.auth.mfa.listFactors();
    expect(data?.totp).toEqual([expect.objectContaining({ id: row!.id, status: "verified" })]);
  });

  it("an existing Nhost-face TOTP user keeps it: listed by mfa.listFactors, stepped up through the face", async () => {
    const email = uniqueEmail("nhtotp");
    const signUp = await svc.post("/signup/email-password", { email, password: PASSWORD });
    const { session } = (await signUp.json()) as { session: { accessToken: string; user: { id: string } } };
    const generated = (await (await svc.get("/mfa/totp/generate", session.accessToken)).json()) as {
      totpSecret: string;
    };
    const on = await svc.post(
      "/user/mfa",
      { code: codeOf(generated.totpSecret), activeMfaType: "totp" },
      session.accessToken,
    );
    expect(on.status).toBe(200);
    await forgetLastStep(session.user.id);
    // A secret written before factors had rows (migration 0027, or an import) is named at its first listing.
    await userD1(session.user.id)
      .prepare("DELETE FROM mfa_factors WHERE user_id = ?")
      .bind(session.user.id)
      .run();

    const supabase = client();
    await supabase.auth.signInWithPassword({ email, password: PASSWORD });
    const { data } = await supabase.auth.mfa.listFactors();
    expect(data?.totp).toEqual([expect.objectContaining({ factor_type: "totp", status: "verified" })]);
    const factorId = data!.totp[0]!.id;
    expect((await supabase.auth.mfa.listFactors()).data?.totp[0]?.id).toBe(factorId);
    const stepped = await supabase.auth.mfa.challengeAndVerify({
      factorId,
      code: codeOf(generated.totpSecret),
    });
    expect(stepped.error).toBeNull();
    expect(decodeJwt(stepped.data!.access_token)).toMatchObject({ aal: "aal2" });
  });
});

describe("auth-js mfa threats", () => {
  it("mfa.challenge / mfa.verify of another user's factor: 404 mfa_factor_not_found", async () => {
    const victim = await userWithTotp();
    const attacker = await userWithTotp();
    // Threat: a challenge of another user's factor.
    const challenged = await attacker.supabase.auth.mfa.challenge({ factorId: victim.factorId });
    expect(challenged.error).toMatchObject({ status: 404, code: "mfa_factor_not_found" });
    // Threat: a challenge of one's own factor used against another factor.
    const own = await attacker.supabase.auth.mfa.challenge({ factorId: attacker.factorId });
    const crossed = await victim.supabase.auth.mfa.verify({
      factorId: victim.factorId,
      challengeId: own.data!.id,
      code: codeOf(victim.secret),
    });
    expect(crossed.error).toMatchObject({ status: 422, code: "mfa_factor_not_found" });
  });

  it("mfa.verify: a stale challenge is mfa_challenge_expired, a used one is gone, a replayed code fails (422)", async () => {
    const { supabase, userId, factorId, secret } = await userWithTotp();
    // Threat: a stale challenge.
    const stale = await supabase.auth.mfa.challenge({ factorId });
    await userD1(userId)
      .prepare("UPDATE mfa_tickets SET expires_at = 0 WHERE user_id = ?")
      .bind(userId)
      .run();
    const late = await supabase.auth.mfa.verify({
      factorId,
      challengeId: stale.data!.id,
      code: codeOf(secret),
    });
    expect(late.error).toMatchObject({ status: 422, code: "mfa_challenge_expired" });

    const challenge = await supabase.auth.mfa.challenge({ factorId });
    expect(challenge.data).toMatchObject({ type: "totp", expires_at: expect.any(Number) });
    const code = codeOf(secret);
    expect(
      (await supabase.auth.mfa.verify({ factorId, challengeId: challenge.data!.id, code })).error,
    ).toBeNull();
    // Threat: a used challenge spent again.
    const again = await supabase.auth.mfa.verify({ factorId, challengeId: challenge.data!.id, code });
    expect(again.error).toMatchObject({ status: 422, code: "mfa_factor_not_found" });
    // Threat: a replayed TOTP code, under a fresh challenge.
    const fresh = await supabase.auth.mfa.challenge({ factorId });
    const replayed = await supabase.auth.mfa.verify({ factorId, challengeId: fresh.data!.id, code });
    expect(replayed.error).toMatchObject({ status: 422, code: "mfa_verification_failed" });
  });

  it("mfa.verify: wrong codes are counted by the same guard as the Nhost face's TOTP step (429 after five)", async () => {
    const { supabase, email, factorId, secret } = await userWithTotp();
    const wrong = String((Number(codeOf(secret)) + 500_000) % 1_000_000).padStart(6, "0");
    for (let i = 0; i < 5; i++) {
      const challenge = await supabase.auth.mfa.challenge({ factorId });
      const failed = await supabase.auth.mfa.verify({
        factorId,
        challengeId: challenge.data!.id,
        code: wrong,
      });
      expect(failed.error).toMatchObject({ status: 422, code: "mfa_verification_failed" });
    }
    // The same user's TOTP step on the Nhost face meets the lock the face's guesses set.
    const started = await svc.request("POST", "/signin/email-password", {
      json: { email, password: PASSWORD },
      headers: { "cf-connecting-ip": uniqueAddress() },
    });
    const { mfa } = (await started.json()) as { mfa: { ticket: string } };
    const locked = await svc.request("POST", "/signin/mfa/totp", {
      json: { ticket: mfa.ticket, otp: codeOf(secret) },
      headers: { "cf-connecting-ip": uniqueAddress() },
    });
    expect(locked.status).toBe(429);
  });

  it("updateUser at aal1 changes no password, email or phone of a user with a factor (401 insufficient_aal); aal2 does", async () => {
    const { supabase: owner, email } = await userWithTotp();
    const thief = client();
    expect((await thief.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    // Threat: a stolen password (or a reset link's aal1 session) rewriting the credentials the second factor guards:
    // a new password ended the owner's sessions, a new address took the reset link away from them.
    const changes = [
      { password: "a brand new password 1" },
      { email: uniqueEmail("thief") },
      { phone: "14155550199" },
    ];
    for (const change of changes) {
      const refused = await thief.auth.updateUser(change);
      expect(refused.error, JSON.stringify(change)).toMatchObject({ status: 401, code: "insufficient_aal" });
    }
    // Nothing changed: the password still signs in, the owner's session lives, no change is pending.
    expect((await client().auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    const { data, error } = await owner.auth.getUser();
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ email });
    expect(data.user?.new_email ?? null).toBeNull();
    expect(data.user?.phone ?? "").toBe("");
    // As GoTrue: only changes are refused. The metadata, and the address the account already has, go at aal1.
    expect((await thief.auth.updateUser({ data: { theme: "dark" } })).error).toBeNull();
    expect((await thief.auth.updateUser({ email })).error).toBeNull();
    // At aal2 the owner changes the password.
    expect((await owner.auth.updateUser({ password: "the owner's new password" })).error).toBeNull();
  });

  it("mfa.unenroll needs aal2 for a verified factor (422 insufficient_aal at aal1); at aal2 it goes from both faces", async () => {
    const { email, factorId, secret } = await userWithTotp();
    const supabase = client();
    await supabase.auth.signInWithPassword({ email, password: PASSWORD });
    // Threat: unenroll at aal1 (a stolen password removing the second factor).
    const refused = await supabase.auth.mfa.unenroll({ factorId });
    expect(refused.error).toMatchObject({ status: 422, code: "insufficient_aal" });
    // Threat: a stolen password adding the thief's own factor. A second factor is enrolled at aal2 only.
    const added = await supabase.auth.mfa.enroll({ factorType: "phone", phone: "+14155550123" });
    expect(added.error).toMatchObject({ status: 403, code: "insufficient_aal" });
    // Threat: aal spoofing. A token whose claims are edited to aal2 does not verify: 403 bad_jwt.
    const token = (await supabase.auth.getSession()).data.session!.access_token;
    const [head, body, signature] = token.split(".");
    const forged = JSON.parse(atob(body!.replace(/-/g, "+").replace(/_/g, "/")));
    forged.aal = "aal2";
    const edited = btoa(JSON.stringify(forged)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    const spoofed = await svc.request("DELETE", `${FACE}/auth/v1/factors/${factorId}`, {
      headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${head}.${edited}.${signature}` },
    });
    expect(spoofed.status).toBe(403);
    expect(spoofed.headers.get("x-sb-error-code")).toBe("bad_jwt");

    await supabase.auth.mfa.challengeAndVerify({ factorId, code: codeOf(secret) });
    const removed = await supabase.auth.mfa.unenroll({ factorId });
    expect(removed.error).toBeNull();
    expect(removed.data).toEqual({ id: factorId });
    expect((await supabase.auth.mfa.listFactors()).data?.all).toEqual([]);
    const nhost = await svc.post("/signin/email-password", { email, password: PASSWORD });
    expect(((await nhost.json()) as { session: unknown }).session).not.toBeNull();
  });
});

describe("mfa.verify with D1 failing once at each statement", () => {
  // Threat: a fault after the challenge was spent answered 503 with the challenge gone (the retry: "factor not
  // found", a new challenge to ask for), or, past the replaced session's end, with the person signed out: neither
  // the aal1 session they hold nor the aal2 session they never got. Now: the challenge is put back, answered again
  // with the factor's next code, and nothing can fail once the aal1 session is ended.
  it("a stepped-up session, or a 503 that keeps the aal1 session and the challenge", async () => {
    const { email, userId, factorId, secret } = await userWithTotp();
    const attempt = async (face: ReturnType<typeof supabaseService>) => {
      const supabase = client();
      const signedIn = await supabase.auth.signInWithPassword({ email, password: PASSWORD });
      const token = signedIn.data.session!.access_token;
      const challenge = await supabase.auth.mfa.challenge({ factorId });
      const verify = () =>
        face.request("POST", `${FACE}/auth/v1/factors/${factorId}/verify`, {
          headers: {
            apikey: PUBLISHABLE_KEY,
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
          },
          body: JSON.stringify({ challenge_id: challenge.data!.id, code: codeOf(secret) }),
        });
      await forgetLastStep(userId);
      return { token, verify, answer: await verify() };
    };
    const settings = {
      AUTH_MFA_ENABLED: "true",
      AUTH_MFA_TOTP_ISSUER: "Acme",
      AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
    };
    let faults = 0;
    await eachStatementFailingOnce(
      env,
      async (bindings) =>
        expect((await attempt(supabaseService({ ...settings, ...bindings }))).answer.status).toBe(200),
      async (bindings, context) => {
        const { token, verify, answer } = await attempt(supabaseService({ ...settings, ...bindings }));
        if (answer.status === 200) return;
        expect(answer.status, `${context}: ${await answer.text()}`).toBe(503);
        faults++;
        const user = await svc.request("GET", `${FACE}/auth/v1/user`, {
          headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${token}` },
        });
        expect(user.status, `${context}: the aal1 session ended: ${await user.clone().text()}`).toBe(200);
        // The factor's next code: a code once accepted stays spent (replay), which the test stands in for by
        // letting the service forget the step it accepted.
        await forgetLastStep(userId);
        const retry = await verify();
        expect(retry.status, `${context}: ${await retry.clone().text()}`).toBe(200);
      },
    );
    expect(faults).toBeGreaterThan(1);
  }, 90_000);
});
