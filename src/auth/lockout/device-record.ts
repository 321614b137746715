/**
 * The account's known devices, as the `SignInLockout` object keeps them (key `devices`): the keyed tag of each device
 * cookie this account was given or shown at a sign-in (known-devices.ts), and when it last signed in. A sign-in that
 * presents one of them is counted on that device's own state, not the account's (docs/protection.md, "The owner's
 * device is not locked out"). Pure: the object reads and writes the record in one synchronous call.
 */

/** tag → when that device last started a session (ms). */
export type DeviceRecord = Record<string, number>;

export const DEVICES_KEY = "devices";

/**
 * How many devices an account keeps: the most recently signed in go on, the oldest is forgotten (and counts with the
 * account again). Bounded, because each sign-in from a fresh browser adds one.
 */
export const DEVICES_KEPT = 50;

/** A device cookie lives 400 days from its last sign-in (auth/devices/device-cookie.ts): after that it is gone. */
export const DEVICE_LIFETIME_MS = 400 * 86_400_000;

/** A known device's sign-in is written at most this often: a sign-in storm from one browser costs no writes. */
const TOUCH_EVERY_MS = 3_600_000;

/** The record with `device` signed in at `now`, or null when nothing needs writing. */
export function withDevice(record: DeviceRecord, device: string, now: number): DeviceRecord | null {
  const at = record[device];
  if (at !== undefined && now - at < TOUCH_EVERY_MS) return null;
  const entries = Object.entries({ ...record, [device]: now })
    .sort(([, a], [, b]) => b - a)
    .slice(0, DEVICES_KEPT);
  return Object.fromEntries(entries);
}

/** Whether `device` is one of the record's, and not past its cookie's life. */
export const knows = (record: DeviceRecord, device: string, now: number): boolean => {
  const at = record[device];
  return at !== undefined && now - at < DEVICE_LIFETIME_MS;
};

/** The record without the devices past their cookie's life (the alarm tidies with it). */
export const pruned = (record: DeviceRecord, now: number): DeviceRecord =>
  Object.fromEntries(Object.entries(record).filter(([, at]) => now - at < DEVICE_LIFETIME_MS));

/** When the record next changes by itself: its oldest device's end of life. */
export const recordExpiresAt = (record: DeviceRecord): number =>
  Math.min(...Object.values(record).map((at) => at + DEVICE_LIFETIME_MS));
