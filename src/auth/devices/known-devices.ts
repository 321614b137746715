import { and, desc, eq, inArray, notInArray } from "drizzle-orm";
import { userDevices } from "../../db/schema";
import type { Deps } from "../../http/deps";
import type { DeviceKeys } from "./device-keys";

/** A known device's last sighting is written at most this often: a sign-in storm costs reads, not writes. */
const TOUCH_EVERY_MS = 3_600_000;

/**
 * The devices kept per user. A user with the password could otherwise grow the table by a row a sign-in (a fresh
 * cookie each time); the oldest sighting goes first, and a device forgotten that way is merely "new" again.
 */
const KEPT_PER_USER = 50;

/** What this sign-in's device is to the user. */
export type Sighting =
  /** Seen before (by its cookie or, without one, by its browser and network). */
  | "known"
  /** The user's first device ever: after sign-up, after an import, or the first since the notice exists. */
  | "first"
  /** A device the user has devices besides, not seen before: the one to mail about. */
  | "new";

/**
 * Records the device of a sign-in and says what it was. A device cookie we have not seen whose browser and network
 * we have (the first sign-in of a browser sets the cookie: the second brings it) is the same device, adopted
 * silently. Parallel sign-ins from one new device insert its row once: only the one whose insert wrote it answers
 * "new", so the user gets one mail.
 */
export async function recordSighting(
  deps: Deps,
  userId: string,
  keys: DeviceKeys,
  now: number,
): Promise<Sighting> {
  const db = deps.shards.ofUser(userId);
  const mine = eq(userDevices.userId, userId);
  const asked = keys.cookie ? [keys.cookie, keys.network] : [keys.network];
  const [seen, any] = await db.batch([
    db
      .select({ deviceHash: userDevices.deviceHash, lastSeenAt: userDevices.lastSeenAt })
      .from(userDevices)
      .where(and(mine, inArray(userDevices.deviceHash, asked))),
    db.select({ deviceHash: userDevices.deviceHash }).from(userDevices).where(mine).limit(1),
  ]);
  const lastSeen = new Map(seen.map((row) => [row.deviceHash, row.lastSeenAt]));
  const primary = keys.cookie ?? keys.network;

  const touch = async (hash: string) => {
    const at = lastSeen.get(hash);
    if (at !== undefined && now - at >= TOUCH_EVERY_MS) {
      await db
        .update(userDevices)
        .set({ lastSeenAt: now })
        .where(and(mine, eq(userDevices.deviceHash, hash)))
        .run();
    }
  };
  if (lastSeen.has(primary)) {
    await touch(primary);
    return "known";
  }

  // Unknown by its cookie (or without one): a browser and network already known adopt the cookie, else both are new.
  const adopted = keys.cookie !== null && lastSeen.has(keys.network);
  const rows = (adopted ? [primary] : asked).map((deviceHash) => ({
    userId,
    deviceHash,
    firstSeenAt: now,
    lastSeenAt: now,
  }));
  const inserted = await db
    .insert(userDevices)
    .values(rows)
    .onConflictDoNothing()
    .returning({ deviceHash: userDevices.deviceHash })
    .all();
  if (inserted.length > 0) await forgetOldest(deps, userId);
  if (adopted) {
    await touch(keys.network);
    return "known";
  }
  if (any.length === 0) return "first";
  return inserted.some((row) => row.deviceHash === primary) ? "new" : "known";
}

async function forgetOldest(deps: Deps, userId: string): Promise<void> {
  const db = deps.shards.ofUser(userId);
  const kept = db
    .select({ deviceHash: userDevices.deviceHash })
    .from(userDevices)
    .where(eq(userDevices.userId, userId))
    .orderBy(desc(userDevices.lastSeenAt))
    .limit(KEPT_PER_USER);
  await db
    .delete(userDevices)
    .where(and(eq(userDevices.userId, userId), notInArray(userDevices.deviceHash, kept)))
    .run();
}
