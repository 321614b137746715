import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import { timingSafeEqualString } from "../../lib/crypto";
import { DEVICES_KEY, type DeviceRecord, knows, pruned, recordExpiresAt, withDevice } from "./device-record";

/**
 * One object per account (`user:<id>`, or `unknown:<keyed hash of the identifier>` for an email or a phone number
 * that has none), one KV entry per sign-in factor in it (contract §13, docs/protection.md "Lockout"): the failures
 * of the window, the lock they earned, how many locks came before (each lasts twice the one before), and the hash of
 * the unlock link mailed for the current lock. Every method runs start to finish without awaiting, so parallel guesses
 * are counted one by one (better-auth's read-then-write counters are what this avoids): of 50 guesses at once
 * exactly `threshold` are let through, the one that reaches it starting the lock.
 *
 * Beside them, the account's known devices (device-record.ts) and one state per factor for each of them
 * (`device:<tag>:<factor>`): an attempt from a known device is counted and locked there, not on the account, so a
 * stranger's guesses do not lock the owner's own browser out (docs/protection.md, "The owner's device is not locked
 * out").
 */

export const LOCKOUT_FACTORS = ["password", "email-otp", "sms-otp", "totp", "recovery-code"] as const;
export type LockoutFactor = (typeof LOCKOUT_FACTORS)[number];

export interface LockoutPolicy {
  /** Failures within `windowMs` that lock the factor (`AUTH_LOCKOUT_THRESHOLD`). */
  threshold: number;
  windowMs: number;
}

interface FactorState {
  /** When each failure of the window happened, oldest first. */
  failures: number[];
  lockedAt: number;
  lockedUntil: number;
  /** Locks so far in this series: the next one lasts `FIRST_LOCK_MS × 2^locks`, at most `MAX_LOCK_MS`. */
  locks: number;
  /** The last failure (`forgottenAt`). */
  lastAt: number;
  /** SHA-256 of the mailed unlock link's secret, for this lock. */
  unlock: { hash: string; expiresAt: number } | null;
  /**
   * Guesses being checked now, by a keyed tag of the credential (`Guess`): the same credential sent again while it is
   * in flight joins it rather than counting anew. Absent in states from before.
   */
  inFlight?: Record<string, InFlight>;
}

/**
 * One guess in flight and the attempts that sent it: counted once as a failure when it was taken, and taken back once
 * (`forgiven`) if it turns out right. A hundred clients of one account signing in at once with its password are one
 * guess, not a hundred failures (test/compat/crowd.test.ts); fifty different guesses at once are fifty.
 */
interface InFlight {
  attempts: number;
  at: number;
  forgiven: boolean;
}

/** A guess not settled within this long (its Worker failed before settling) no longer holds a place. */
const IN_FLIGHT_MS = 60_000;
const inFlightOf = (state: FactorState, now: number): Record<string, InFlight> =>
  Object.fromEntries(
    Object.entries(state.inFlight ?? {}).filter(([, entry]) => now - entry.at < IN_FLIGHT_MS),
  );

export type TakeVerdict =
  | { allowed: false; retryAfterSeconds: number }
  /**
   * `lock`: this very attempt reached the threshold and started a lock (its time, and how long it lasts). `joined`:
   * the same guess was in flight already, and this attempt was not counted again. `device`: it came from a known
   * device and was counted on that device's own state (its `forgive` and `release` name the device too).
   */
  | { allowed: true; lock: { at: number; durationMs: number } | null; joined?: boolean; device?: true };

export interface FactorLock {
  factor: LockoutFactor;
  lockedUntil: number;
}

export const FIRST_LOCK_MS = 15 * 60_000;
export const MAX_LOCK_MS = 24 * 3_600_000;
export const FORGET_AFTER_MS = 24 * 3_600_000;
/** The mailed link works for a day, whether or not the lock it was sent for has ended by then. */
export const UNLOCK_LINK_LIFETIME_MS = 24 * 3_600_000;

export const lockDuration = (locksBefore: number) =>
  Math.min(FIRST_LOCK_MS * 2 ** Math.min(locksBefore, 16), MAX_LOCK_MS);

const PREFIX = "factor:";
const DEVICE_PREFIX = "device:";
/** The state of `factor` for the account, or for one of its known devices. */
const keyOf = (factor: LockoutFactor, device?: string) =>
  device === undefined ? `${PREFIX}${factor}` : `${DEVICE_PREFIX}${device}:${factor}`;
const factorOfKey = (key: string) => key.slice(key.lastIndexOf(":") + 1) as LockoutFactor;
const fresh = (): FactorState => ({
  failures: [],
  lockedAt: 0,
  lockedUntil: 0,
  locks: 0,
  lastAt: 0,
  unlock: null,
});

/**
 * A quiet day after the last failure and after the end of the last lock forgets the series (its link, a day old by
 * then, has expired too): a state as good as none.
 */
const forgottenAt = (state: FactorState) => Math.max(state.lastAt, state.lockedUntil) + FORGET_AFTER_MS;
const isStale = (state: FactorState, now: number) => now >= forgottenAt(state);

export class SignInLockout extends DurableObject<Env> {
  private load(key: string, now: number): FactorState {
    const stored = this.ctx.storage.kv.get<FactorState>(key);
    return stored && !isStale(stored, now) ? stored : fresh();
  }

  private save(key: string, state: FactorState, now: number): void {
    this.ctx.storage.kv.put<FactorState>(key, state);
    this.tidyLater(now);
  }

  /** Output gates hold the answer until the alarm is stored; the alarm only tidies (see `alarm`). */
  private tidyLater(now: number): void {
    void this.ctx.storage.getAlarm().then((alarm) => {
      if (alarm === null) return this.ctx.storage.setAlarm(now + FORGET_AFTER_MS);
    });
  }

  private devices(): DeviceRecord {
    return this.ctx.storage.kv.get<DeviceRecord>(DEVICES_KEY) ?? {};
  }

  /** Every stored state of a factor: the account's and its devices'. */
  private states(): [string, FactorState][] {
    return [PREFIX, DEVICE_PREFIX].flatMap((prefix) => [
      ...this.ctx.storage.kv.list<FactorState>({ prefix }),
    ]);
  }

  /**
   * A session was started from the device `device` (a keyed tag of its cookie, known-devices.ts): from now on its
   * attempts are counted on its own. Written at most once an hour per device; the 50 most recent are kept.
   */
  rememberDevice(device: string, now: number): void {
    const record = withDevice(pruned(this.devices(), now), device, now);
    if (!record) return;
    this.ctx.storage.kv.put<DeviceRecord>(DEVICES_KEY, record);
    this.tidyLater(now);
  }

  /**
   * The password was reset or changed: every known device is forgotten, with its counts, so a device someone else
   * signed in from before counts with the account again. Answers how many there were.
   */
  forgetDevices(): number {
    const count = Object.keys(this.devices()).length;
    this.ctx.storage.kv.delete(DEVICES_KEY);
    for (const [key] of this.ctx.storage.kv.list({ prefix: DEVICE_PREFIX })) this.ctx.storage.kv.delete(key);
    return count;
  }

  /**
   * An attempt at `factor`, counted as a failure before its credential is looked at (`forgive` takes it back when it
   * was right). While locked nothing is counted and the attempt is refused, whether the credential is right or not.
   * `unlockHash` is the hash of the link the caller will mail if this attempt starts a lock and turns out wrong.
   * `device`: the tag of the device cookie the attempt presented; when it is one of the account's known devices the
   * attempt is counted on that device's state, and the account's lock does not apply to it.
   */
  take(
    factor: LockoutFactor,
    now: number,
    policy: LockoutPolicy,
    unlockHash: string,
    guess?: string,
    device?: string,
  ): TakeVerdict {
    const known = device !== undefined && knows(this.devices(), device, now);
    const key = keyOf(factor, known ? device : undefined);
    const scope = known ? ({ device: true } as const) : {};
    const state = this.load(key, now);
    if (now < state.lockedUntil) {
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((state.lockedUntil - now) / 1000)) };
    }
    const inFlight = inFlightOf(state, now);
    const same = guess === undefined ? undefined : inFlight[guess];
    if (same) {
      inFlight[guess!] = { ...same, attempts: same.attempts + 1 };
      this.save(key, { ...state, inFlight }, now);
      return { allowed: true, lock: null, joined: true, ...scope };
    }
    if (guess !== undefined) inFlight[guess] = { attempts: 1, at: now, forgiven: false };
    const failures = state.failures.filter((at) => now - at < policy.windowMs);
    failures.push(now);
    if (failures.length < policy.threshold) {
      this.save(key, { ...state, failures, lastAt: now, inFlight }, now);
      return { allowed: true, lock: null, ...scope };
    }
    // The count starts over after a lock: the next one needs `threshold` failures again, and lasts twice as long.
    const durationMs = lockDuration(state.locks);
    this.save(
      key,
      {
        failures: [],
        lockedAt: now,
        lockedUntil: now + durationMs,
        locks: state.locks + 1,
        lastAt: now,
        unlock: { hash: unlockHash, expiresAt: now + UNLOCK_LINK_LIFETIME_MS },
        inFlight,
      },
      now,
    );
    return { allowed: true, lock: { at: now, durationMs }, ...scope };
  }

  /**
   * The attempt was right: the owner's own failures before it are forgiven (the series of locks is not: the next lock
   * still lasts longer). A lock started by this very attempt (`lockedAt`) is lifted, with its link and its place in
   * the series; a lock another attempt started stands.
   */
  forgive(
    factor: LockoutFactor,
    now: number,
    lockedAt: number | null,
    guess?: string,
    device?: string,
  ): void {
    const key = keyOf(factor, device);
    const stored = this.ctx.storage.kv.get<FactorState>(key);
    if (!stored) return;
    if (guess !== undefined) {
      const entry = stored.inFlight?.[guess];
      // The guess was forgiven already, for another attempt that sent it: this one only leaves.
      if (entry?.forgiven) {
        this.release(factor, now, guess, device);
        return;
      }
      const inFlight = this.leave(stored, now, guess, true);
      stored.inFlight = inFlight;
    }
    const state = { ...stored, failures: [] };
    if (lockedAt !== null && stored.lockedAt === lockedAt) {
      Object.assign(state, {
        lockedAt: 0,
        lockedUntil: 0,
        unlock: null,
        locks: Math.max(0, stored.locks - 1),
      });
    }
    this.save(key, state, now);
  }

  /** A wrong guess settled: the attempt leaves its place in flight (its failure stays counted). */
  release(factor: LockoutFactor, now: number, guess: string, device?: string): void {
    const key = keyOf(factor, device);
    const stored = this.ctx.storage.kv.get<FactorState>(key);
    if (!stored?.inFlight?.[guess]) return;
    this.save(key, { ...stored, inFlight: this.leave(stored, now, guess, false) }, now);
  }

  /** The in-flight guesses after one attempt of `guess` settled (`forgiven`: it was right). */
  private leave(state: FactorState, now: number, guess: string, forgiven: boolean): Record<string, InFlight> {
    const inFlight = inFlightOf(state, now);
    const entry = inFlight[guess];
    if (!entry) return inFlight;
    if (entry.attempts <= 1) delete inFlight[guess];
    else inFlight[guess] = { ...entry, attempts: entry.attempts - 1, forgiven: entry.forgiven || forgiven };
    return inFlight;
  }

  /**
   * The mailed link: the lock it was sent for (the account's, or a known device's) is lifted and its failures
   * forgotten, once. The series is kept (`locks`, remembered a quiet day from now as any other): whoever keeps
   * guessing after the owner unlocked meets a longer lock each time. Null for a link that is unknown, used or past
   * its day.
   */
  redeem(unlockHash: string, now: number): LockoutFactor | null {
    for (const [key, state] of this.states()) {
      if (!state.unlock || state.unlock.expiresAt <= now) continue;
      if (!timingSafeEqualString(state.unlock.hash, unlockHash)) continue;
      this.save(
        key,
        { ...state, failures: [], lockedAt: 0, lockedUntil: 0, lastAt: now, unlock: null, inFlight: {} },
        now,
      );
      return factorOfKey(key);
    }
    return null;
  }

  /**
   * An admin's unlock: every factor forgotten, the account's and its known devices' (the devices stay known).
   * Answers the account's factors that were locked.
   */
  clear(now: number): LockoutFactor[] {
    const locked = this.locks(now).map((lock) => lock.factor);
    for (const [key] of this.states()) this.ctx.storage.kv.delete(key);
    return locked;
  }

  /** The factors locked at `now`, and until when (the console shows them). */
  locks(now: number): FactorLock[] {
    return LOCKOUT_FACTORS.flatMap((factor) => {
      const state = this.ctx.storage.kv.get<FactorState>(keyOf(factor));
      return state && now < state.lockedUntil ? [{ factor, lockedUntil: state.lockedUntil }] : [];
    });
  }

  /**
   * Tidies: deletes the factors whose state is stale and comes back for the others. Never `deleteAll()`: under a live
   * instance that broke a sibling object's next call in CI (src/replay/jti-ledger.ts); deleting keys cannot.
   */
  override async alarm(): Promise<void> {
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [key, state] of this.states()) {
      if (isStale(state, now)) {
        this.ctx.storage.kv.delete(key);
        continue;
      }
      next = Math.min(next, forgottenAt(state));
    }
    const stored = this.devices();
    const devices = pruned(stored, now);
    const kept = Object.keys(devices).length;
    if (kept === 0) this.ctx.storage.kv.delete(DEVICES_KEY);
    else {
      if (kept < Object.keys(stored).length) this.ctx.storage.kv.put<DeviceRecord>(DEVICES_KEY, devices);
      next = Math.min(next, recordExpiresAt(devices));
    }
    if (Number.isFinite(next)) await this.ctx.storage.setAlarm(Math.max(next, now + 60_000));
  }
}
