import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { userDevices } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { deviceKeys } from "./device-keys";
import { deviceNameOf } from "./device-name";

/**
 * How the request's device is known to the user, read before the session (a sign-in's risk, src/risk/): by its
 * device cookie (a browser the user signed in with before and that kept our cookie: the owner's, short of a stolen
 * cookie), by its browser and network only (an app that sends no cookie, or a neighbour on the same network with the
 * same browser: weaker), or not at all. One point read of `user_devices`; written by the sighting after the session
 * (./known-devices.ts), never here.
 */
export type KnownBy = "cookie" | "network" | null;

export async function knownDeviceOf(
  deps: Deps,
  userId: string,
  userAgent: string | undefined,
  from: Pick<Db, "select"> = deps.shards.ofUser(userId),
): Promise<KnownBy> {
  const keys = await deviceKeys(
    deps.config.secrets.encryptionKey,
    userId,
    deps.visitor.deviceCookie,
    deviceNameOf(userAgent),
    deps.visitor.address,
  );
  const asked = keys.cookie ? [keys.cookie, keys.network] : [keys.network];
  const rows = await from
    .select({ deviceHash: userDevices.deviceHash })
    .from(userDevices)
    .where(and(eq(userDevices.userId, userId), inArray(userDevices.deviceHash, asked)))
    .all();
  const seen = new Set(rows.map((row) => row.deviceHash));
  if (keys.cookie && seen.has(keys.cookie)) return "cookie";
  return seen.has(keys.network) ? "network" : null;
}
