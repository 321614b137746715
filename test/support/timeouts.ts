// The service's own timeouts, waited out in a fraction of their length. A test of a hung outside call (a provider, the
// JWKS, Twilio) used to wait the full 10 s for the service's `AbortSignal.timeout` to fire, three times in a row. The
// test and the Worker share one isolate in the workers pool, so the test can see which timeout the service asks for
// and hand it a signal that fires sooner: the service's own code path (its signal, its abort, its answer) runs
// unchanged, and the test asserts the duration it asked for, so the production value is checked where it is used.
import { vi } from "vitest";

/**
 * How long a shortened timeout lasts: a tenth of the real ones, and still ample for the calls of the same request that
 * do answer (the token exchange before a hung profile fetch goes to a fake on loopback) on a busy machine.
 */
const SHORT_MS = 1_000;

/**
 * Runs `work` with every `AbortSignal.timeout(productionMs)` firing after `SHORT_MS` instead (other durations pass
 * through untouched), and returns every duration the service asked for meanwhile, for the test to assert.
 */
export async function withShortTimeouts(productionMs: number, work: () => Promise<void>): Promise<number[]> {
  const requested: number[] = [];
  const timeout = AbortSignal.timeout.bind(AbortSignal);
  const spy = vi.spyOn(AbortSignal, "timeout").mockImplementation((ms: number) => {
    requested.push(ms);
    return timeout(ms === productionMs ? SHORT_MS : ms);
  });
  try {
    await work();
  } finally {
    spy.mockRestore();
  }
  return requested;
}
