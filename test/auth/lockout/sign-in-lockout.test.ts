// The SignInLockout Durable Object's contract (src/auth/lockout/sign-in-lockout.ts): `threshold` failures of a factor
// within the window lock it for 15 minutes, doubling with each further lock up to a day; a right attempt forgives;
// the mailed link's hash unlocks its factor once; an admin's clear unlocks all; the alarm tidies without emptying
// the object under a live instance. Threats are named above each test.
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  FIRST_LOCK_MS,
  FORGET_AFTER_MS,
  lockDuration,
  MAX_LOCK_MS,
} from "../../../src/auth/lockout/sign-in-lockout";

const lockout = () =>
  env.SIGN_IN_LOCKOUTS.get(env.SIGN_IN_LOCKOUTS.idFromName(`test:${crypto.randomUUID()}`));
const POLICY = { threshold: 10, windowMs: 3_600_000 };
const MINUTE = 60_000;

/** `threshold` failures at `now` (the last one locks); answers the last verdict. */
async function lockAt(stub: ReturnType<typeof lockout>, now: number, hash = "h") {
  let last: Awaited<ReturnType<typeof stub.take>> | undefined;
  for (let i = 0; i < POLICY.threshold; i++) last = await stub.take("password", now, POLICY, hash);
  return last!;
}

describe("SignInLockout", () => {
  // Threat: a guesser spreading attempts just under the threshold, or a lock that never grows.
  it("locks at the threshold for 15 min, then 30 min, doubling up to 24 h; the count starts over after each lock", async () => {
    const stub = lockout();
    let now = Date.now();
    for (let i = 0; i < POLICY.threshold - 1; i++) {
      expect(await stub.take("password", now, POLICY, "h")).toEqual({ allowed: true, lock: null });
    }
    expect(await stub.take("password", now, POLICY, "h")).toEqual({
      allowed: true,
      lock: { at: now, durationMs: 15 * MINUTE },
    });
    expect(await stub.take("password", now + 1000, POLICY, "h")).toEqual({
      allowed: false,
      retryAfterSeconds: 15 * 60 - 1,
    });
    // Other factors are not locked by the password's failures.
    expect((await stub.take("totp", now, POLICY, "h")).allowed).toBe(true);
    // When the lock ends, ten more failures lock again, for twice as long.
    now += 15 * MINUTE;
    expect(await lockAt(stub, now)).toEqual({ allowed: true, lock: { at: now, durationMs: 30 * MINUTE } });
    expect(await stub.take("password", now, POLICY, "h")).toEqual({
      allowed: false,
      retryAfterSeconds: 30 * 60,
    });
    const durations = [15, 30, 60, 120, 240, 480, 960, 1440, 1440, 1440].map((m) => m * MINUTE);
    expect(durations.map((_, locks) => lockDuration(locks))).toEqual(durations);
    expect(lockDuration(50)).toBe(MAX_LOCK_MS);
    expect(FIRST_LOCK_MS).toBe(15 * MINUTE);
  });

  it("counts failures in a sliding window: old ones fall out", async () => {
    const stub = lockout();
    const now = Date.now();
    for (let i = 0; i < POLICY.threshold - 1; i++) await stub.take("password", now, POLICY, "h");
    const later = now + POLICY.windowMs;
    expect(await stub.take("password", later, POLICY, "h")).toEqual({ allowed: true, lock: null });
  });

  // Threat: parallel guesses slipping past the count (a read-then-write counter would).
  it("counts 50 parallel attempts one by one: exactly the threshold let through, one of them starting the lock", async () => {
    const stub = lockout();
    const now = Date.now();
    const verdicts = await Promise.all(
      Array.from({ length: 50 }, () => stub.take("password", now, POLICY, "h")),
    );
    expect(verdicts.filter((v) => v.allowed)).toHaveLength(POLICY.threshold);
    expect(verdicts.filter((v) => v.allowed && v.lock)).toHaveLength(1);
    expect(verdicts.filter((v) => !v.allowed)).toHaveLength(50 - POLICY.threshold);
    expect(await stub.locks(now)).toEqual([{ factor: "password", lockedUntil: now + 15 * MINUTE }]);
  });

  it("a right attempt forgives the failures before it; a lock it started itself is lifted, with its place in the series", async () => {
    const stub = lockout();
    const now = Date.now();
    for (let i = 0; i < POLICY.threshold - 1; i++) await stub.take("password", now, POLICY, "h");
    await stub.forgive("password", now, null);
    for (let i = 0; i < POLICY.threshold - 1; i++) {
      expect(await stub.take("password", now, POLICY, "h")).toEqual({ allowed: true, lock: null });
    }
    // The attempt that reached the threshold was right: no lock, and the next lock is again a first one.
    const locking = await stub.take("password", now, POLICY, "h");
    expect(locking.allowed && locking.lock).toBeTruthy();
    await stub.forgive("password", now, now);
    expect(await stub.locks(now)).toEqual([]);
    expect(await lockAt(stub, now)).toEqual({ allowed: true, lock: { at: now, durationMs: 15 * MINUTE } });
    // A right attempt taken before another one locked does not lift that lock.
    await stub.forgive("password", now + 1, now - 5);
    expect(await stub.locks(now + 1)).toHaveLength(1);
  });

  // Threat: a mailed link used twice, or guessed.
  it("the link's hash unlocks its factor once; another hash, a used one or a day-old one unlocks nothing", async () => {
    const stub = lockout();
    const now = Date.now();
    await lockAt(stub, now, "first");
    expect(await stub.redeem("other", now)).toBeNull();
    expect(await stub.redeem("first", now + 1000)).toBe("password");
    expect(await stub.locks(now + 1000)).toEqual([]);
    expect(await stub.redeem("first", now + 1000)).toBeNull();
    await lockAt(stub, now + 2000, "second");
    expect(await stub.redeem("second", now + 2000 + 24 * 3_600_000)).toBeNull();
  });

  it("clear unlocks every factor and answers which were locked", async () => {
    const stub = lockout();
    const now = Date.now();
    await lockAt(stub, now);
    for (let i = 0; i < POLICY.threshold; i++) await stub.take("totp", now, POLICY, "t");
    await stub.take("sms-otp", now, POLICY, "s");
    expect((await stub.clear(now)).sort()).toEqual(["password", "totp"]);
    expect(await stub.locks(now)).toEqual([]);
    expect(await stub.take("password", now, POLICY, "h")).toEqual({ allowed: true, lock: null });
  });

  // The alarm of a sibling object once emptied its storage under a live instance, whose next call failed (CI).
  it("a quiet day after the lock forgets the series; the alarm deletes stale factors and the object keeps working", async () => {
    const stub = lockout();
    const long = Date.now() - 3 * FORGET_AFTER_MS;
    await lockAt(stub, long);
    await runDurableObjectAlarm(stub);
    expect(
      await runInDurableObject(stub, (_instance, state) => [...state.storage.kv.list({ prefix: "factor:" })]),
    ).toEqual([]);
    const now = Date.now();
    // The series was forgotten: the next lock is a first one again.
    expect(await lockAt(stub, now)).toEqual({ allowed: true, lock: { at: now, durationMs: 15 * MINUTE } });
    expect(await stub.take("password", now, POLICY, "h")).toEqual({ allowed: false, retryAfterSeconds: 900 });
  });
});
