import type { UserRow } from "../../db/schema";
import { RateLimitedError } from "../../errors";
import type { Deps } from "../../http/deps";
import { sha256Hex } from "../../lib/crypto";
import { toHex } from "../../lib/hex";
import { hmacSubkey } from "../../lib/subkeys";
import { deviceTag } from "./known-devices";
import { sendLockoutMail } from "./lockout-mail";
import type { LockoutFactor } from "./sign-in-lockout";

/**
 * The lockout around every check of a guessable sign-in factor (contract §13, docs/protection.md "Lockout"): before the
 * credential is looked at, `beginAttempt` counts the attempt in the account's `SignInLockout` object, or refuses it
 * with 429 `account-locked` while the factor is locked (a right credential included); after the check, `settle`
 * forgives a right one, and mails the owner when a wrong one started a lock. An attempt that presents the device
 * cookie of one of the account's known devices is counted and locked on that device alone (known-devices.ts). It does not depend on the client's
 * address nor on `AUTH_RATE_LIMIT_ENABLE`: per-address limits are another mechanism (docs/rate-limits.md).
 */

/**
 * Whose attempt it is: the user when the identifier has one, else the identifier itself (`email:<address>`,
 * `phone:<E.164>`), so that guessing at an account that does not exist locks the same way and answers the same.
 */
export interface Attempted {
  user?: UserRow | null;
  /**
   * The user's id when it is known before the row (a password sign-in with several shards: the directory named it,
   * and the row is read beside the count); the row then comes to `settle`.
   */
  userId?: string;
  identifier?: string;
}

export interface Attempt {
  /** After the credential was checked: `right` or not (`user`: the row of an account counted by `userId`). Never throws. */
  settle(right: boolean, user?: UserRow): Promise<void>;
}

/**
 * The tag of the credential an attempt presents, keyed to the account: the same password sent by many clients at
 * once is one guess in flight (sign-in-lockout.ts `InFlight`), so a crowd of an account's own clients is not taken
 * for a guesser. Keyed with a subkey of `AUTH_ENCRYPTION_KEY` and kept only while the guess is checked.
 */
async function guessTag(deps: Deps, objectName: string, credential: string): Promise<string> {
  const key = await hmacSubkey(deps.config.secrets.encryptionKey, "sign-in-lockout");
  const tag = await crypto.subtle.sign(
    "HMAC",
    key,
    new TextEncoder().encode(`guess\0${objectName}\0${credential}`),
  );
  return toHex(tag).slice(0, 32);
}

/** The object of an account: a keyed hash for an unknown identifier, so the object's name reveals no address. */
async function objectName(deps: Deps, account: Attempted): Promise<string> {
  const userId = account.user?.id ?? account.userId;
  if (userId) return `user:${userId}`;
  const identifier = (account.identifier ?? "").trim().toLowerCase();
  const key = await hmacSubkey(deps.config.secrets.encryptionKey, "sign-in-lockout");
  return `unknown:${toHex(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(identifier)))}`;
}

export const lockoutOf = (deps: Deps, name: string) =>
  deps.env.SIGN_IN_LOCKOUTS.get(deps.env.SIGN_IN_LOCKOUTS.idFromName(name));

/** The object of a user (the admin's unlock, the mailed link). */
export const userLockout = (deps: Deps, userId: string) => lockoutOf(deps, `user:${userId}`);

/**
 * Counts an attempt at `factor` of `account`, or throws 429 `account-locked` (with `Retry-After`) while it is locked.
 * The object failing throws too, which the app answers with 503: no credential is checked uncounted.
 */
export async function beginAttempt(
  deps: Deps,
  factor: LockoutFactor,
  account: Attempted,
  credential?: string,
): Promise<Attempt> {
  const { config } = deps;
  const name = await objectName(deps, account);
  const lockout = lockoutOf(deps, name);
  const guess = credential === undefined ? undefined : await guessTag(deps, name, credential);
  // Whether the device is one the account knows is the object's to say, in the same call that counts: the tag is
  // made for every attempt that carries a cookie, known account or not, so both do the same work.
  const cookie = deps.visitor.deviceCookie;
  const device = cookie ? await deviceTag(deps, name, cookie) : undefined;
  // The link's secret is made for every attempt, used only by one that starts a lock: the same work either way.
  const secret = toHex(crypto.getRandomValues(new Uint8Array(32)));
  const verdict = await lockout.take(
    factor,
    deps.now(),
    { threshold: config.lockout.threshold, windowMs: config.lockout.window * 1000 },
    await sha256Hex(secret),
    guess,
    device,
  );
  if (!verdict.allowed) throw RateLimitedError.accountLocked(verdict.retryAfterSeconds);
  // The state this attempt was counted on: its device's, or the account's.
  const on = verdict.device ? device : undefined;
  return {
    async settle(right, read) {
      // Only the row of the account counted: a stale directory entry's owner (no row read) is mailed nothing.
      const user = account.user ?? (read && read.id === account.userId ? read : null);
      if (right) {
        // After the answer (issue 48, "Round trips": no wave of the sign-in waits for it): best effort either way,
        // and the count only ever stays one higher for a moment, which a guesser gains nothing from.
        deps.background(
          bestEffort(
            () => lockout.forgive(factor, deps.now(), verdict.lock?.at ?? null, guess, on),
            factor,
            "lockout count not forgiven",
          ),
        );
        return;
      }
      // A stale place in flight only joins a later identical guess to a settled one, for at most a minute.
      if (guess !== undefined)
        await bestEffort(
          () => lockout.release(factor, deps.now(), guess, on),
          factor,
          "lockout guess not released",
        );
      if (!verdict.lock || !user) return;
      const minutes = Math.round(verdict.lock.durationMs / 60_000);
      deps.audit({
        type: "signin.locked",
        userId: user.id,
        detail: on ? { factor, minutes, device: true } : { factor, minutes },
      });
      // After the answer: the attempt that locks a known account answers as fast as one at an unknown account.
      if (user.email) deps.background(sendLockoutMail(deps, user, factor, minutes, `${user.id}.${secret}`));
    },
  };
}

/**
 * A password's check run while its attempt's count is in flight (issue 48, "Round trips"; docs/protection.md
 * "Lockout"): the count's call to the account's object leaves the isolate first, then the hash (tens of milliseconds
 * of CPU, which hold the isolate's thread) runs while the object answers, so the sign-in waits for the longer of the
 * two rather than both. The check's verdict is returned only once the count allowed the attempt: a locked account's
 * right and wrong passwords are refused with the same 429 after the same work, and nothing that depends on the
 * verdict (a session, a password kept elsewhere being asked, a rehash) runs before the count answered.
 */
export async function checkedBesideCount<T>(
  counting: Promise<Attempt>,
  check: () => Promise<T>,
): Promise<{ attempt: Attempt; checked: T }> {
  // Taken below, after the check; meanwhile a refusal must not be an unhandled rejection.
  counting.catch(() => {});
  // One turn of the event loop: workerd writes a call's request when the isolate yields, and a hash in WASM does not
  // yield. Without it the count would leave only after the hash, and the two would still run one after the other.
  await new Promise((resolve) => setTimeout(resolve, 0));
  const checked = await check();
  return { attempt: await counting, checked };
}

/**
 * Best effort, as the second factor's guard does (auth/mfa/second-factor.ts): a right credential is not turned into a
 * 503 because its count could not be taken back. The count then stays one higher; a guesser gains nothing from it.
 */
async function bestEffort(work: () => Promise<void>, factor: LockoutFactor, what: string): Promise<void> {
  try {
    await work();
  } catch (error) {
    console.warn(JSON.stringify({ level: "warn", what, factor, detail: String(error) }));
  }
}
