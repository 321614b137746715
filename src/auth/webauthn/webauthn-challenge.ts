import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";

/**
 * One object per WebAuthn challenge (`idFromName(challenge)`): what the ceremony was started for, until it expires.
 * `take` reads and deletes in one synchronous call, so a challenge is consumed exactly once even when the same
 * response is sent twice in parallel (a replayed assertion finds nothing).
 */

interface Stored<T> {
  ceremony: T;
  expiresAt: number;
}

const KEY = "ceremony";

export class WebauthnChallenge extends DurableObject<Env> {
  put(ceremony: unknown, expiresAt: number): void {
    this.ctx.storage.kv.put<Stored<unknown>>(KEY, { ceremony, expiresAt });
    void this.ctx.storage.setAlarm(expiresAt);
  }

  take(now: number): unknown {
    const stored = this.ctx.storage.kv.get<Stored<unknown>>(KEY);
    this.ctx.storage.kv.delete(KEY);
    return stored && stored.expiresAt > now ? stored.ceremony : null;
  }

  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
