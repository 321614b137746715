import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../../src/auth/mfa/totp";
import { runEveryMinute } from "../../../src/runtime/cron";
import { PASSWORD, uniqueAddress, uniqueEmail } from "../../helpers";
import { userD1 } from "../../support/shards";
import { FACE, PUBLISHABLE_KEY, SECRET_KEY, supabaseClient, supabaseService } from "./support";

/**
 * auth-js's `auth.admin.mfa` (listFactors, deleteFactor) and `updateUserById`'s timed `ban_duration` through the face
 * (contract supabase.md §2), with the secret key. Threat: anyone but the service role reaching a user's factors.
 */

const svc = supabaseService({ AUTH_MFA_ENABLED: "true" });
const admin = () => supabaseClient(svc, SECRET_KEY);
const client = () => supabaseClient(svc, undefined, { "cf-connecting-ip": uniqueAddress() });

/** A user with a verified TOTP factor, made through the face. */
async function userWithTotp() {
  const supabase = client();
  const email = uniqueEmail("sbadminmfa");
  const { data } = await supabase.auth.signUp({ email, password: PASSWORD });
  const enrolled = await supabase.auth.mfa.enroll({ factorType: "totp" });
  const { id, totp } = enrolled.data as { id: string; totp: { secret: string } };
  const code = totpCode(decodeBase32IgnorePadding(totp.secret), totpStep(Date.now()));
  expect((await supabase.auth.mfa.challengeAndVerify({ factorId: id, code })).error).toBeNull();
  return { supabase, email, userId: data.user!.id, factorId: id };
}

describe("auth.admin.mfa with the secret key", () => {
  it("admin.mfa.listFactors and admin.mfa.deleteFactor: the user's TOTP goes, on the Nhost face too", async () => {
    const { email, userId, factorId } = await userWithTotp();
    const listed = await admin().auth.admin.mfa.listFactors({ userId });
    expect(listed.error).toBeNull();
    expect(listed.data?.factors).toEqual([
      expect.objectContaining({ id: factorId, factor_type: "totp", status: "verified" }),
    ]);
    const deleted = await admin().auth.admin.mfa.deleteFactor({ userId, id: factorId });
    expect(deleted.error).toBeNull();
    // auth-js hands GoTrue's answer (the factor) on wrapped once more, as `data.data`.
    expect(deleted.data).toMatchObject({ data: { id: factorId, factor_type: "totp" } });
    expect((await admin().auth.admin.mfa.listFactors({ userId })).data?.factors).toEqual([]);
    const nhost = await svc.post("/signin/email-password", { email, password: PASSWORD });
    expect(((await nhost.json()) as { session: unknown }).session).not.toBeNull();
    const again = await admin().auth.admin.mfa.deleteFactor({ userId, id: factorId });
    expect(again.error).toMatchObject({ status: 404, code: "mfa_factor_not_found" });
  });

  it("admin.mfa.listFactors / deleteFactor refuse the publishable key and a user's own token (403 not_admin)", async () => {
    const { supabase, userId, factorId } = await userWithTotp();
    // Threat: a user (or anyone with the app's key) listing or removing factors through the admin API.
    const asClient = await supabaseClient(svc).auth.admin.mfa.listFactors({ userId });
    expect(asClient.error).toMatchObject({ status: 403, code: "not_admin" });
    const token = (await supabase.auth.getSession()).data.session!.access_token;
    const asUser = await svc.request("DELETE", `${FACE}/auth/v1/admin/users/${userId}/factors/${factorId}`, {
      headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${token}` },
    });
    expect(asUser.status).toBe(403);
    expect((await admin().auth.admin.mfa.listFactors({ userId })).data?.factors).toHaveLength(1);
  });
});

describe("auth.admin.updateUserById with a timed ban_duration", () => {
  it("bans until then (banned_until; signInWithPassword 400 user_banned, sessions end); the ban ends by itself", async () => {
    const email = uniqueEmail("sbban");
    const supabase = client();
    const { data } = await supabase.auth.signUp({ email, password: PASSWORD });
    const userId = data.user!.id;
    const before = Date.now();
    const banned = await admin().auth.admin.updateUserById(userId, { ban_duration: "24h" });
    expect(banned.error).toBeNull();
    const until = Date.parse((banned.data.user as unknown as { banned_until: string }).banned_until);
    expect(until).toBeGreaterThanOrEqual(before + 24 * 3_600_000);
    expect(until).toBeLessThan(Date.now() + 24 * 3_600_000 + 1000);
    const refused = await client().auth.signInWithPassword({ email, password: PASSWORD });
    expect(refused.error).toMatchObject({ status: 400, code: "user_banned" });
    // The ban ended the sessions the user had.
    expect((await supabase.auth.refreshSession()).error).not.toBeNull();

    // Not yet due: the every-minute cron leaves it.
    await runEveryMinute(svc.env);
    expect((await client().auth.signInWithPassword({ email, password: PASSWORD })).error).not.toBeNull();
    // Its time comes (the row's expiry moved to the past, as 24 hours would): the cron lifts it.
    await userD1(userId)
      .prepare("UPDATE users SET banned_until = ? WHERE id = ?")
      .bind(Date.now() - 1, userId)
      .run();
    await runEveryMinute(svc.env);
    expect((await client().auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    expect((await admin().auth.admin.getUserById(userId)).data.user).not.toHaveProperty("banned_until");
  });

  it("ban_duration none lifts a ban at once; a ban made permanent elsewhere is never lifted by the cron", async () => {
    const email = uniqueEmail("sbunban");
    const { data } = await client().auth.signUp({ email, password: PASSWORD });
    const userId = data.user!.id;
    await admin().auth.admin.updateUserById(userId, { ban_duration: "1h" });
    const lifted = await admin().auth.admin.updateUserById(userId, { ban_duration: "none" });
    expect(lifted.data.user).not.toHaveProperty("banned_until");
    expect((await client().auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();

    // Threat: a timed ban's end undoing the operator's later permanent disabling (the Nhost admin API).
    await admin().auth.admin.updateUserById(userId, { ban_duration: "1h" });
    const disabled = await svc.request("PATCH", `/admin/users/${userId}`, {
      json: { disabled: true },
      headers: { "x-hasura-admin-secret": svc.env.AUTH_ADMIN_SECRET as string },
    });
    expect(disabled.status).toBe(200);
    await runEveryMinute(svc.env, Date.now() + 2 * 3_600_000);
    expect((await client().auth.signInWithPassword({ email, password: PASSWORD })).error).toMatchObject({
      code: "user_banned",
    });
  });
});

describe("auth.admin.deleteUser(id, true): GoTrue's soft deletion", () => {
  it("keeps the row (same id) with the email hashed, the factors and sessions gone; the address is free again", async () => {
    const { supabase, email, userId } = await userWithTotp();
    const deleted = await admin().auth.admin.deleteUser(userId, true);
    expect(deleted.error).toBeNull();
    const kept = await admin().auth.admin.getUserById(userId);
    expect(kept.data.user?.id).toBe(userId);
    expect(kept.data.user?.email).not.toContain(email.split("@")[0]!);
    // Still an address in form: the Postgres mirror's column is Nhost's auth.email domain (its CHECK, as Nhost's
    // migration 00001 writes it), which a bare hash fails, and the mirror would refuse the row.
    expect(kept.data.user?.email).toMatch(
      /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/,
    );
    expect((await admin().auth.admin.mfa.listFactors({ userId })).data?.factors).toEqual([]);
    // Threat: a soft-deleted account still used. Its sessions ended, its password is gone.
    expect((await supabase.auth.refreshSession()).error).not.toBeNull();
    const signIn = await client().auth.signInWithPassword({ email, password: PASSWORD });
    expect(signIn.error).toMatchObject({ status: 400, code: "invalid_credentials" });
    // The address makes a new account, with a new id.
    const again = await client().auth.signUp({ email, password: PASSWORD });
    expect(again.error).toBeNull();
    expect(again.data.user?.id).not.toBe(userId);
    // Soft-deleting twice changes nothing; a hard deletion after it removes the row.
    expect((await admin().auth.admin.deleteUser(userId, true)).error).toBeNull();
    expect((await admin().auth.admin.deleteUser(userId)).error).toBeNull();
    expect((await admin().auth.admin.getUserById(userId)).error).toMatchObject({ status: 404 });
  });
});
