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

export class OneTimeCode extends DurableObject<Env> {
  /** A new code replaces the previous one and resets the count. */
  issue(codeHash: string, expiresAt: number, tag?: string): void {
    this.ctx.storage.kv.put<Challenge>(KEY, { codeHash, expiresAt, failures: 0, ...(tag ? { tag } : {}) });
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
      return challenge.tag ?? "";
    }
    const failures = challenge.failures + 1;
    if (failures >= MAX_FAILURES) kv.delete(KEY);
    else kv.put<Challenge>(KEY, { ...challenge, failures });
    return null;
  }

  override async alarm(): Promise<void> {
    const challenge = this.ctx.storage.kv.get<Challenge>(KEY);
    if (challenge && challenge.expiresAt > Date.now()) await this.ctx.storage.setAlarm(challenge.expiresAt);
    else await this.ctx.storage.deleteAll();
  }
}
