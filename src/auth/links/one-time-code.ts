import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import { timingSafeEqualString } from "../../lib/crypto";

/**
 * One object per (purpose, identifier), e.g. `email-otp:<address>`: the current one-time code, stored as an HMAC
 * by the Worker, its expiry and the wrong tries so far. `verify` checks and counts in one call that runs start to
 * finish without awaiting, so parallel guesses cannot exceed the cap (a read-then-write counter could).
 */

interface Challenge {
  codeHash: string;
  expiresAt: number;
  failures: number;
  /** What the code is for, when its issuer named it (a mailed link's code: the ticket's type and user). */
  tag?: string;
}

export type VerifyOutcome = "ok" | "invalid";

/** At most this many wrong tries per code; then the code is dead (contract §3.2, improvement). */
export const MAX_FAILURES = 5;
const KEY = "challenge";
/** The code the last right answer redeemed, until a new code or its expiry: what `restore` can put back. */
const SPENT = "spent";

export class OneTimeCode extends DurableObject<Env> {
  /** A new code replaces the previous one and resets the count. */
  issue(codeHash: string, expiresAt: number, tag?: string): void {
    this.ctx.storage.kv.put<Challenge>(KEY, { codeHash, expiresAt, failures: 0, ...(tag ? { tag } : {}) });
    this.ctx.storage.kv.delete(SPENT);
    void this.ctx.storage.setAlarm(expiresAt);
  }

  verify(codeHash: string, now: number): VerifyOutcome {
    return this.redeem(codeHash, now) === null ? "invalid" : "ok";
  }

  /** As `verify`, answering the right code's tag (`""` when it has none) and null for every wrong one. */
  redeem(codeHash: string, now: number): string | null {
    const kv = this.ctx.storage.kv;
    const challenge = kv.get<Challenge>(KEY);
    if (!challenge || challenge.expiresAt <= now) {
      kv.delete(KEY);
      return null;
    }
    if (timingSafeEqualString(challenge.codeHash, codeHash)) {
      kv.delete(KEY);
      kv.put<Challenge>(SPENT, challenge);
      return challenge.tag ?? "";
    }
    const failures = challenge.failures + 1;
    if (failures >= MAX_FAILURES) kv.delete(KEY);
    else kv.put<Challenge>(KEY, { ...challenge, failures });
    return null;
  }

  /**
   * The code `codeHash` redeemed last, made current again: the Worker's request that redeemed it failed for a fault
   * after the redemption (the session's writes), the 503 the client retries with the same code. Only while no newer
   * code was issued, no other code is current, and it has not expired; its wrong tries as they were. True when put back.
   */
  restore(codeHash: string, now: number): boolean {
    const kv = this.ctx.storage.kv;
    const spent = kv.get<Challenge>(SPENT);
    if (!spent || kv.get<Challenge>(KEY) || spent.expiresAt <= now) return false;
    if (!timingSafeEqualString(spent.codeHash, codeHash)) return false;
    kv.put<Challenge>(KEY, spent);
    kv.delete(SPENT);
    return true;
  }

  override async alarm(): Promise<void> {
    const challenge = this.ctx.storage.kv.get<Challenge>(KEY);
    if (challenge && challenge.expiresAt > Date.now()) await this.ctx.storage.setAlarm(challenge.expiresAt);
    else await this.ctx.storage.deleteAll();
  }
}
