import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { and, eq, isNull, lt, or } from "drizzle-orm";
import { mfaRecoveryCodes, type UserRow, users } from "../db/schema";
import { decrypt } from "../lib/crypto";
import { codeHash } from "../lib/one-time-code";
import { matchTotp } from "../lib/totp";
import type { Deps } from "./deps";

/** The user's TOTP secret, decrypted; null when none was generated. */
export async function totpSecretOf(deps: Deps, user: UserRow): Promise<Uint8Array | null> {
  if (!user.totpSecret) return null;
  return decodeBase32IgnorePadding(await decrypt(deps.config.AUTH_ENCRYPTION_KEY!, user.totpSecret));
}

/**
 * Accepts a TOTP code of the user's secret and records its time step in the same conditional UPDATE that checks it
 * is newer than the last accepted one: a code can be used once, even by two requests racing (RFC 6238 §5.2).
 */
export async function acceptTotpCode(deps: Deps, user: UserRow, code: string): Promise<boolean> {
  const secret = await totpSecretOf(deps, user);
  const step = secret ? matchTotp(secret, code, deps.now()) : null;
  if (step === null) return false;
  const recorded = await deps.db
    .update(users)
    .set({ totpLastStep: Number(step) })
    .where(and(eq(users.id, user.id), or(isNull(users.totpLastStep), lt(users.totpLastStep, Number(step)))))
    .returning({ id: users.id })
    .get();
  return recorded !== undefined;
}

/** Recovery codes are typed by people: case, spaces and dashes do not matter. */
const normalise = (code: string) => code.toLowerCase().replace(/[\s-]/g, "");

/** HMAC bound to the user, like the email codes: the codes' 50 bits are not left open to an offline search. */
export function recoveryCodeHash(deps: Deps, userId: string, code: string): Promise<string> {
  return codeHash(deps.config.AUTH_ENCRYPTION_KEY!, `mfa-recovery:${userId}`, normalise(code));
}

/** Uses a recovery code in place of the TOTP code: deleted by the same statement that finds it, so used once. */
export async function useRecoveryCode(deps: Deps, userId: string, code: string): Promise<boolean> {
  if (normalise(code).length === 0 || code.length > 32) return false;
  const used = await deps.db
    .delete(mfaRecoveryCodes)
    .where(
      and(
        eq(mfaRecoveryCodes.userId, userId),
        eq(mfaRecoveryCodes.codeHash, await recoveryCodeHash(deps, userId, code)),
      ),
    )
    .returning({ userId: mfaRecoveryCodes.userId })
    .get();
  return used !== undefined;
}

/** The second factor at sign-in or deactivation: a fresh TOTP code, or one of the user's recovery codes. */
export async function acceptSecondFactor(deps: Deps, user: UserRow, code: string): Promise<boolean> {
  return (await acceptTotpCode(deps, user, code)) || (await useRecoveryCode(deps, user.id, code));
}
