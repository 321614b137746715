/**
 * How long a failed message waits before its next attempt: exponential from the configured first delay, capped at
 * the 12 hours a queue message may be delayed. With the default 10 s and wrangler.toml's 16 retries, a message is
 * retried for about 59 hours (10 s · (2¹² − 1) ≈ 11.4 h over the first twelve, then four at 12 h) before it becomes a
 * dead letter: more than the 24 hours contract move-in §5 asks, so a receiver down for a day loses nothing.
 */
export const MAX_DELAY_SECONDS = 12 * 3600;

export function retryDelaySeconds(attempts: number, firstDelaySeconds: number): number {
  const exponent = Math.max(0, Math.min(attempts - 1, 30));
  return Math.min(MAX_DELAY_SECONDS, firstDelaySeconds * 2 ** exponent);
}
