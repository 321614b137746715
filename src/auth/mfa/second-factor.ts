import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { and, eq, inArray, isNull, lt, or } from "drizzle-orm";
import { mfaRecoveryCodes, type UserRow, users } from "../../db/schema";
import { RateLimitedError } from "../../errors";
import type { Deps } from "../../http/deps";
import { decrypt } from "../../lib/crypto";
import { codeHash, legacyCodeHash } from "../../lib/short-codes";
import { matchTotp } from "./totp";

/** The user's TOTP secret, decrypted; null when none was generated. */
export async function totpSecretOf(deps: Deps, user: UserRow): Promise<Uint8Array | null> {
  if (!user.totpSecret) return null;
  return decodeBase32IgnorePadding(await decrypt(deps.config.AUTH_ENCRYPTION_KEY!, user.totpSecret));
}

/**
 * Accepts a TOTP code of the user's secret and records its time step in the same conditional UPDATE that checks it
 * is newer than the last accepted one: a code can be used once, even by two requests racing (RFC 6238 §5.2).
 */
async function checkTotpCode(deps: Deps, user: UserRow, code: string): Promise<boolean> {
  const secret = await totpSecretOf(deps, user);
  const step = secret ? matchTotp(secret, code, deps.now()) : null;
  if (step === null) return false;
  const recorded = await deps.shards
    .ofUser(user.id)
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
  return codeHash(
    deps.config.AUTH_ENCRYPTION_KEY!,
    "recovery-codes",
    `mfa-recovery:${userId}`,
    normalise(code),
  );
}

/** Uses a recovery code in place of the TOTP code: deleted by the same statement that finds it, so used once. */
async function useRecoveryCode(deps: Deps, userId: string, code: string): Promise<boolean> {
  if (normalise(code).length === 0 || code.length > 32) return false;
  const used = await deps.shards
    .ofUser(userId)
    .delete(mfaRecoveryCodes)
    .where(
      and(
        eq(mfaRecoveryCodes.userId, userId),
        inArray(mfaRecoveryCodes.codeHash, [
          await recoveryCodeHash(deps, userId, code),
          // Codes issued before subkeys (one-time-code.ts, `legacyCodeHash`).
          await legacyCodeHash(deps.config.AUTH_ENCRYPTION_KEY!, `mfa-recovery:${userId}`, normalise(code)),
        ]),
      ),
    )
    .returning({ userId: mfaRecoveryCodes.userId })
    .get();
  return used !== undefined;
}

/**
 * Every second-factor check of a user goes through the user's `GuessGuard` (auth/mfa/guess-guard.ts): taken before
 * the code is looked at, forgiven when it was right. Past the free failures the answer is 429 with `Retry-After`,
 * whichever endpoint or ticket the guess came through.
 */
async function guarded(deps: Deps, userId: string, check: () => Promise<boolean>): Promise<boolean> {
  const guard = deps.env.GUESS_GUARDS.get(deps.env.GUESS_GUARDS.idFromName(`second-factor:${userId}`));
  const verdict = await guard.take(deps.now());
  if (!verdict.allowed) {
    throw new RateLimitedError(verdict.retryAfterSeconds, "too many wrong codes: try again later");
  }
  const right = await check();
  if (right) await forgive(guard, userId);
  return right;
}

/**
 * Best effort: the right code is spent by now (its time step recorded, a recovery code deleted), so a guard that
 * cannot forgive for now (overloaded, reset) must not turn the success into a 503 whose retry finds the code used.
 * The count then stays one failure higher: the user may meet a lock one guess sooner, a guesser gains nothing.
 */
async function forgive(guard: { forgive(): Promise<void> }, userId: string): Promise<void> {
  try {
    await guard.forgive();
  } catch (error) {
    console.warn(
      JSON.stringify({
        level: "warn",
        what: "second-factor count not forgiven",
        userId,
        detail: String(error),
      }),
    );
  }
}

/** A TOTP code of the user's secret (activation, new recovery codes): guarded, and used once. */
export function acceptTotpCode(deps: Deps, user: UserRow, code: string): Promise<boolean> {
  return guarded(deps, user.id, () => checkTotpCode(deps, user, code));
}

/** The second factor at sign-in or deactivation: a fresh TOTP code, or one of the user's recovery codes. */
export function acceptSecondFactor(deps: Deps, user: UserRow, code: string): Promise<boolean> {
  return guarded(
    deps,
    user.id,
    async () => (await checkTotpCode(deps, user, code)) || (await useRecoveryCode(deps, user.id, code)),
  );
}
