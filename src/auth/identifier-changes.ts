import { claim, type DirectoryEntry, releaseEntries } from "../db/directory";
import { isUniqueViolation } from "../db/errors";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";

/**
 * A user's email or phone number changing (an email change confirmed, a guest becoming a regular account), kept in
 * step with the directory (src/db/directory.ts) as a sign-up is: the new value is claimed before the shard is
 * written, so two shards never both hold it (another user's claim: `taken`, the answer the unique index gives
 * within a shard); the claim goes back if the write surely did not happen (not after a fault, which may have
 * come after it did); the old value is given back after it. With one shard the directory is not used, and this is
 * `write` alone.
 */
export async function changeIdentifiers<T>(
  deps: Pick<Deps, "shards" | "now">,
  userId: string,
  change: { added: readonly DirectoryEntry[]; removed: readonly DirectoryEntry[] },
  write: () => Promise<T | undefined>,
  taken: () => AppError,
): Promise<T | undefined> {
  if (await claim(deps.shards, userId, change.added, deps.now())) throw taken();
  const giveBack = () => releaseEntries(deps.shards, userId, change.added).catch(() => {});
  let written: T | undefined;
  try {
    written = await write();
  } catch (error) {
    // Given back only when the write surely did not happen (a refusal, the unique index). A fault may have come after
    // D1 applied it (its answer lost): the row may hold the value, so the claim stays the user's; if the row does not,
    // a claimant takes the key over once the claim is older than the sign-up window (directory.ts), and the retry the
    // 503 asks for finds it the user's still.
    if (refused(error)) await giveBack();
    throw error;
  }
  if (written === undefined) await giveBack();
  // Best effort: a key left behind names this user, who no longer holds the value, so a claimant takes it over once
  // the claim is older than the sign-up window (directory.ts).
  if (written !== undefined) await releaseEntries(deps.shards, userId, change.removed).catch(() => {});
  return written;
}

/** A write that surely did not happen: refused by the service (a 4xx) or by the shard's unique index. */
const refused = (error: unknown): boolean =>
  (error instanceof AppError && error.status < 500) || isUniqueViolation(error);
