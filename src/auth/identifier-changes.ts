import { claim, type DirectoryEntry, releaseEntries } from "../db/directory";
import type { AppError } from "../errors";
import type { Deps } from "../http/deps";

/**
 * A user's email or phone number changing (an email change confirmed, a guest becoming a regular account), kept in
 * step with the directory (src/db/directory.ts) as a sign-up is: the new value is claimed before the shard is
 * written, so two shards never both hold it (another user's claim: `taken`, the answer the unique index gives
 * within a shard); the claim goes back if the write did not happen; the old value is given back after it. With one
 * shard the directory is not used, and this is `write` alone.
 */
export async function changeIdentifiers<T>(
  deps: Pick<Deps, "shards" | "now">,
  userId: string,
  change: { added: readonly DirectoryEntry[]; removed: readonly DirectoryEntry[] },
  write: () => Promise<T | undefined>,
  taken: () => AppError,
): Promise<T | undefined> {
  if (await claim(deps.shards, userId, change.added, deps.now())) throw taken();
  let written: T | undefined;
  try {
    written = await write();
  } finally {
    if (written === undefined) await releaseEntries(deps.shards, userId, change.added).catch(() => {});
  }
  // Best effort: a key left behind names this user, who no longer holds the value, so a claimant takes it over once
  // the claim is older than the sign-up window (directory.ts).
  if (written !== undefined) await releaseEntries(deps.shards, userId, change.removed).catch(() => {});
  return written;
}
