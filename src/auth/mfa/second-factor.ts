import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { and, eq, inArray, isNull, lt, or } from "drizzle-orm";
import { mfaRecoveryCodes, type UserRow, users } from "../../db/schema";
import { RateLimitedError } from "../../errors";
import type { Deps } from "../../http/deps";
import { decrypt } from "../../lib/crypto";
import { codeHash, legacyCodeHash } from "../../lib/short-codes";
import { beginAttempt, type LockoutFactor } from "../lockout";
import { matchTotp } from "./totp";

/** The user's TOTP secret, decrypted; null when none was generated. */
export async function totpSecretOf(deps: Deps, user: UserRow): Promise<Uint8Array | null> {
  if (!user.totpSecret) return null;
  return decodeBase32IgnorePadding(await decrypt(deps.config.secrets.encryptionKey, user.totpSecret));
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
    deps.config.secrets.encryptionKey,
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
          await legacyCodeHash(deps.config.secrets.encryptionKey, `mfa-recovery:${userId}`, normalise(code)),
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
 *
 * An active second factor is also under the account's lockout (auth/lockout/, contract §13), counted first: ten
 * failures within the hour lock it for 15 minutes and more, and mail the owner. The guard stays beside it as the
 * tighter short-term cap, and as the one the lockout's mailed link does not lift: someone holding the password and
 * the mailbox still gets only the guard's few dozen guesses a day (docs/protection.md "Lockout"). An attempt the
 * guard refuses stays counted by the lockout: hammering a throttled factor is guessing at it. A code of a secret
 * being set up (activation) protects nothing yet, and is not counted by the lockout.
 */
async function guarded(
  deps: Deps,
  user: UserRow,
  factor: LockoutFactor,
  check: () => Promise<boolean>,
  protecting = user.activeMfaType === "totp",
): Promise<boolean> {
  const attempt = protecting ? await beginAttempt(deps, factor, { user }) : undefined;
  const guard = deps.env.GUESS_GUARDS.get(deps.env.GUESS_GUARDS.idFromName(`second-factor:${user.id}`));
  const verdict = await guard.take(deps.now());
  if (!verdict.allowed) {
    throw new RateLimitedError(verdict.retryAfterSeconds, "too many wrong codes: try again later");
  }
  const right = await check();
  await attempt?.settle(right);
  if (right) await forgive(guard, user.id);
  return right;
}

/**
 * An admin's unlock (contract §13): the user's wrong second-factor codes forgotten, the guard's lock with them, as the
 * account's lockout is cleared beside it.
 */
export async function forgetSecondFactorGuesses(deps: Deps, userId: string): Promise<void> {
  await deps.env.GUESS_GUARDS.get(deps.env.GUESS_GUARDS.idFromName(`second-factor:${userId}`)).forgive();
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
  return guarded(deps, user, "totp", () => checkTotpCode(deps, user, code));
}

/**
 * The second factor at sign-in or deactivation: a fresh TOTP code, or one of the user's recovery codes. Which one a
 * guess is, its shape says (a TOTP code is six digits, a recovery code never is), so the lockout locks each on its own:
 * a stranger locking the TOTP code does not lock its owner out of the recovery codes for long (the guard counts both
 * together, for an hour at most).
 */
export function acceptSecondFactor(deps: Deps, user: UserRow, code: string): Promise<boolean> {
  return /^\d{6}$/.test(code)
    ? guarded(deps, user, "totp", () => checkTotpCode(deps, user, code))
    : guarded(deps, user, "recovery-code", () => useRecoveryCode(deps, user.id, code));
}

/**
 * The code of a phone factor's challenge (src/auth/mfa/factors.ts), from its one-time code object (wrong tries capped
 * there): guarded as the TOTP codes are, and under the account's lockout once the factor is verified.
 */
export function acceptPhoneCode(
  deps: Deps,
  user: UserRow,
  check: () => Promise<boolean>,
  verified: boolean,
): Promise<boolean> {
  return guarded(deps, user, "sms-otp", check, verified);
}

/**
 * The code of an email step (../second-step.ts), from its one-time code object (wrong tries capped there): guarded as
 * every second-factor code is, and under the account's lockout as the mailed sign-in codes are (`email-otp`).
 */
export function acceptEmailCode(deps: Deps, user: UserRow, check: () => Promise<boolean>): Promise<boolean> {
  return guarded(deps, user, "email-otp", check, true);
}
