import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

/**
 * One object per (bucket, key), e.g. `brute-force:ip:203.0.113.7`. A sliding-window counter: the count of the
 * current fixed window plus the previous window's count weighted by how much of it still overlaps the sliding
 * window. Counting and deciding happen in one synchronous call, so parallel requests cannot slip past the limit.
 * The counts are persisted: an object evicted between bursts must not forget them.
 */

interface Windows {
  start: number;
  current: number;
  previous: number;
}

export interface HitResult {
  allowed: boolean;
  retryAfterSeconds: number;
}

const KEY = "windows";

export class RateLimiter extends DurableObject<Env> {
  hit(limit: number, intervalMs: number, now: number): HitResult {
    const kv = this.ctx.storage.kv;
    const stored = kv.get<Windows>(KEY);
    let state = stored ?? { start: now - (now % intervalMs), current: 0, previous: 0 };
    const elapsedWindows = Math.floor((now - state.start) / intervalMs);
    const rolled = !stored || elapsedWindows >= 1;
    if (elapsedWindows >= 1) {
      state = {
        start: state.start + elapsedWindows * intervalMs,
        current: 0,
        previous: elapsedWindows === 1 ? state.current : 0,
      };
    }
    const overlap = 1 - (now - state.start) / intervalMs;
    const estimate = state.previous * overlap + state.current;
    if (estimate + 1 > limit) {
      kv.put(KEY, state);
      // When enough of the previous window has slid out (or the current window ends), one more request fits.
      const waitMs =
        state.previous > 0 && state.current + 1 <= limit
          ? ((estimate + 1 - limit) / state.previous) * intervalMs
          : state.start + intervalMs - now;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
    }
    kv.put(KEY, { ...state, current: state.current + 1 });
    // Output gates keep the answer until the alarm is stored; it only moves when the window rolls.
    if (rolled) void this.ctx.storage.setAlarm(state.start + 2 * intervalMs);
    return { allowed: true, retryAfterSeconds: 0 };
  }

  /**
   * Whether one more hit would be refused, without counting it (and the seconds until it would fit): for counts of
   * failures only, where a success must still be refused while the failures are over the limit.
   */
  peek(limit: number, intervalMs: number, now: number): HitResult {
    const stored = this.ctx.storage.kv.get<Windows>(KEY);
    if (!stored) return { allowed: true, retryAfterSeconds: 0 };
    const elapsedWindows = Math.floor((now - stored.start) / intervalMs);
    if (elapsedWindows >= 2) return { allowed: true, retryAfterSeconds: 0 };
    const [start, current, previous] =
      elapsedWindows === 1
        ? [stored.start + intervalMs, 0, stored.current]
        : [stored.start, stored.current, stored.previous];
    const overlap = 1 - (now - start) / intervalMs;
    const estimate = previous * overlap + current;
    if (estimate + 1 <= limit) return { allowed: true, retryAfterSeconds: 0 };
    const waitMs =
      previous > 0 && current + 1 <= limit
        ? ((estimate + 1 - limit) / previous) * intervalMs
        : start + intervalMs - now;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
  }

  /**
   * Takes back one hit made at `at` that turned out not to count (the risk velocity's count of an attempt whose first
   * factor was wrong: src/risk/velocity.ts), from the window it landed in; never below zero, nothing once that window
   * has slid out.
   */
  unhit(intervalMs: number, at: number): void {
    const kv = this.ctx.storage.kv;
    const stored = kv.get<Windows>(KEY);
    if (!stored) return;
    const landed = at - (at % intervalMs);
    if (stored.start === landed && stored.current > 0)
      kv.put(KEY, { ...stored, current: stored.current - 1 });
    else if (stored.start === landed + intervalMs && stored.previous > 0)
      kv.put(KEY, { ...stored, previous: stored.previous - 1 });
  }

  /** Two windows after the last hit nothing is left to remember. */
  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
