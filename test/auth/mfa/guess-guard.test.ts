// The GuessGuard Durable Object's contract (src/auth/mfa/guess-guard.ts): free second-factor guesses, then a lock
// that doubles from 30 s to an hour; a right guess forgives; a day without failures forgets.
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { FREE_FAILURES } from "../../../src/auth/mfa/guess-guard";

const guard = () => env.GUESS_GUARDS.get(env.GUESS_GUARDS.idFromName(`second-factor:${crypto.randomUUID()}`));

describe("GuessGuard", () => {
  it(`lets ${FREE_FAILURES} guesses through, then locks for 30 s, doubling up to an hour`, async () => {
    const stub = guard();
    let now = 1_000_000;
    for (let i = 0; i < FREE_FAILURES; i++) expect((await stub.take(now)).allowed).toBe(true);
    expect(await stub.take(now + 1000)).toEqual({ allowed: false, retryAfterSeconds: 29 });
    now += 30_000;
    expect((await stub.take(now)).allowed).toBe(true);
    expect(await stub.take(now)).toEqual({ allowed: false, retryAfterSeconds: 60 });
    // Many more failures: the lock never exceeds an hour.
    for (let i = 0; i < 20; i++) {
      now += 3_600_000;
      await stub.take(now);
    }
    expect((await stub.take(now)).retryAfterSeconds).toBe(3600);
  });

  // Threat: parallel guesses slipping past the count.
  it("counts parallel guesses one by one", async () => {
    const stub = guard();
    const verdicts = await Promise.all(Array.from({ length: 20 }, () => stub.take(5_000_000)));
    expect(verdicts.filter((verdict) => verdict.allowed)).toHaveLength(FREE_FAILURES);
  });

  it("a right guess forgives, and a day without failures forgets (the alarm then deletes the state)", async () => {
    const stub = guard();
    for (let i = 0; i < FREE_FAILURES; i++) await stub.take(1000);
    await stub.forgive();
    expect((await stub.take(2000)).allowed).toBe(true);
    const day = 24 * 3_600_000;
    for (let i = 0; i < FREE_FAILURES; i++) await stub.take(3000);
    expect((await stub.take(3000 + day)).allowed).toBe(true);
    const stale = guard();
    await stale.take(Date.now() - 2 * day);
    await runDurableObjectAlarm(stale);
    expect(
      await runInDurableObject(stale, (_instance, state) => state.storage.kv.get("failures")),
    ).toBeUndefined();
  });
});
