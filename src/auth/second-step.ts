import { and, asc, eq, ne, type SQL, sql } from "drizzle-orm";
import { mfaFactors, type UserRow, users } from "../db/schema";
import type { Deps } from "../http/deps";
import { smsCodeText } from "../sms/templates";
import { issueOneTimeCode } from "./one-time-codes";
import { toWireUser } from "./users";

/**
 * Which second factor a first-factor sign-in must be followed by, whichever face it came through ("one account, two
 * faces": a factor added on one holds on the other). TOTP is the user's row's (`active_mfa_type = 'totp'`); phone and
 * `webauthn` factors are rows of `mfa_factors` (src/auth/mfa/factors.ts). `users.active_mfa_type` is kept in step with
 * them: `totp` while TOTP is on, else `sms` while a phone factor is verified, else null (Nhost's own values), so the
 * session check and the refresh read it with the user's row as before, with no query of their own.
 */
export type SecondStep =
  | { kind: "totp" }
  | { kind: "phone"; factorId: string; phone: string }
  | { kind: "webauthn" }
  | null;

/** A phone factor's code object (one per factor: a new challenge, from either face, replaces the code before). */
export const phoneFactorScope = (factorId: string) => `mfa-phone:${factorId}`;
/** GoTrue's `MFA_CHALLENGE_EXPIRY_DURATION` default, and the texted code's life. */
export const PHONE_CODE_LIFETIME_MS = 5 * 60 * 1000;

const verifiedPhoneFactor = (userId: string) =>
  sql`exists (SELECT 1 FROM ${mfaFactors} WHERE ${mfaFactors.userId} = ${userId} AND ${mfaFactors.factorType} = 'phone' AND ${mfaFactors.status} = 'verified')`;

/** `active_mfa_type` with TOTP off: `sms` while a phone factor is verified (in SQL, so no write in between is missed). */
export const mfaTypeWithoutTotp = (userId: string): SQL =>
  sql`CASE WHEN ${verifiedPhoneFactor(userId)} THEN 'sms' END`;

/**
 * The statement that puts `active_mfa_type` back in step after a factor row changed (a phone factor verified or
 * removed, factors dropped by a reset); batched with the change itself. TOTP, when on, stays the type.
 */
export function syncMfaType(db: ReturnType<Deps["shards"]["ofUser"]>, userId: string) {
  return db
    .update(users)
    .set({
      activeMfaType: sql`CASE WHEN ${users.activeMfaType} = 'totp' THEN 'totp' ELSE ${mfaTypeWithoutTotp(userId)} END`,
    })
    .where(eq(users.id, userId));
}

/**
 * The second step the user's sign-ins owe: TOTP first (no query), else the oldest verified phone factor, else any
 * verified `webauthn` factor. The sign-in path's one read of `mfa_factors`; never on a session check.
 */
export async function secondStepOf(deps: Deps, user: UserRow): Promise<SecondStep> {
  if (user.activeMfaType === "totp") return { kind: "totp" };
  const rows = await deps.shards
    .ofUser(user.id)
    .select({ id: mfaFactors.id, type: mfaFactors.factorType, phone: mfaFactors.phone })
    .from(mfaFactors)
    .where(
      and(
        eq(mfaFactors.userId, user.id),
        eq(mfaFactors.status, "verified"),
        ne(mfaFactors.factorType, "totp"),
      ),
    )
    .orderBy(asc(mfaFactors.createdAt), asc(mfaFactors.id))
    .all();
  const phone = rows.find((r) => r.type === "phone" && r.phone);
  if (phone?.phone) return { kind: "phone", factorId: phone.id, phone: phone.phone };
  if (rows.some((r) => r.type === "webauthn")) return { kind: "webauthn" };
  return null;
}

/** A code for the phone factor, texted to its number (the same code object the Supabase face's challenge uses). */
export async function textPhoneFactorCode(
  deps: Deps,
  user: UserRow,
  factor: { factorId: string; phone: string },
): Promise<void> {
  const code = await issueOneTimeCode(deps, phoneFactorScope(factor.factorId), PHONE_CODE_LIFETIME_MS);
  await deps.sms.send(factor.phone, smsCodeText(user.locale, deps.config.locales.default, code), {
    template: "mfa-sms",
    locale: user.locale,
    code,
    user: toWireUser(user),
  });
}
