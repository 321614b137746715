import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";

/**
 * One object per user (`second-factor:<userId>`): how many second-factor guesses failed in a row, and until when
 * the next one must wait. Per-ticket caps alone let someone who has the password open fresh tickets all day
 * (~14,400 TOTP guesses, ~4 % a day of hitting one of the three valid codes). Here the first `FREE_FAILURES`
 * failures cost nothing; after that each one doubles a lock from 30 s up to an hour, so a day holds a few dozen
 * guesses (OWASP MFA Cheat Sheet, "limit the number of attempts"). A guess is counted as a failure when it is
 * taken and forgiven when it succeeds, in synchronous calls: parallel guesses cannot slip past the count.
 */

interface Failures {
  count: number;
  lockedUntil: number;
  lastAt: number;
}

export interface GuessVerdict {
  allowed: boolean;
  retryAfterSeconds: number;
}

export const FREE_FAILURES = 5;
const FIRST_LOCK_MS = 30_000;
const MAX_LOCK_MS = 3_600_000;
/** A day without a failure forgets the count. */
const FORGET_AFTER_MS = 24 * 3_600_000;
const KEY = "failures";

export class GuessGuard extends DurableObject<Env> {
  take(now: number): GuessVerdict {
    const kv = this.ctx.storage.kv;
    const stored = kv.get<Failures>(KEY);
    const current = stored && now - stored.lastAt < FORGET_AFTER_MS ? stored : { count: 0, lockedUntil: 0 };
    if (now < current.lockedUntil) {
      return { allowed: false, retryAfterSeconds: Math.ceil((current.lockedUntil - now) / 1000) };
    }
    const count = current.count + 1;
    const lockedUntil =
      count >= FREE_FAILURES ? now + Math.min(FIRST_LOCK_MS * 2 ** (count - FREE_FAILURES), MAX_LOCK_MS) : 0;
    kv.put<Failures>(KEY, { count, lockedUntil, lastAt: now });
    // Output gates hold the answer until the alarm is stored.
    if (!stored) void this.ctx.storage.setAlarm(now + FORGET_AFTER_MS);
    return { allowed: true, retryAfterSeconds: 0 };
  }

  /** The guess was right: the user is who they say, the count starts over. */
  forgive(): void {
    this.ctx.storage.kv.delete(KEY);
  }

  override async alarm(): Promise<void> {
    const stored = this.ctx.storage.kv.get<Failures>(KEY);
    if (stored && Date.now() - stored.lastAt < FORGET_AFTER_MS) {
      await this.ctx.storage.setAlarm(stored.lastAt + FORGET_AFTER_MS);
    } else {
      await this.ctx.storage.deleteAll();
    }
  }
}
