import { findUserById, toWireUser } from "../auth";
import type { Deps } from "../http/deps";
import type { UserProfile } from "./types";

/** At most this long: every user id the service makes is a UUID; anything longer is no id, and is not looked up. */
const MAX_ID_LENGTH = 100;

/**
 * `getUser`: the user's profile as the Nhost User resource has it, and whether the user is disabled; null for an
 * unknown id. One primary-key read in the user's shard.
 */
export async function getUserProfile(deps: Deps, id: unknown): Promise<UserProfile | null> {
  if (typeof id !== "string" || id.length === 0 || id.length > MAX_ID_LENGTH) return null;
  const user = await findUserById(deps.shards, id);
  return user ? { ...toWireUser(user), disabled: user.disabled } : null;
}
