import { eq, type SQL, sql } from "drizzle-orm";
import { users } from "../db/schema";
import type { Shards } from "../db/shards";

/**
 * A stored password hash replaced by one at the current cost (src/lib/password.ts `needsRehash`: an argon2id of
 * before issue 48, bcrypt from Nhost, an imported format), the same password hashed again at a sign-in that proved it.
 *
 * The replacement is conditional on the row still holding the hash that was verified (`from`): a password changed
 * or reset while the sign-in ran (another tab, an admin) is never overwritten by the old password's new hash. It is
 * not a change of password: `password_changed_at` stays (the `password.changed` event tells them apart by it).
 */
export interface PasswordRehash {
  /** The hash the sign-in verified, as read from the row. */
  readonly from: string;
  /** The same password's hash at the current cost. */
  readonly to: string;
}

/**
 * The columns of the user's `UPDATE` that carry the rehash: written in the batch that writes the session (one
 * statement, the one that already sets `last_seen`: ../auth/new-sessions.ts), so a sign-in that upgrades a hash adds
 * no write and no round trip. SQLite evaluates every `SET` against the row before the update, so both read the old
 * hash.
 */
export function rehashColumns(
  { from, to }: PasswordRehash,
  now: number,
): { passwordHash: SQL; updatedAt: SQL } {
  const verified = sql`${users.passwordHash} = ${from}`;
  return {
    passwordHash: sql`CASE WHEN ${verified} THEN ${to} ELSE ${users.passwordHash} END`,
    updatedAt: sql`CASE WHEN ${verified} THEN ${now} ELSE ${users.updatedAt} END`,
  };
}

/** The same replacement on its own: for a sign-in that wrote no session (its answer is a second factor's ticket). */
export function rehashAlone(shards: Shards, userId: string, rehash: PasswordRehash, now: number) {
  return shards
    .ofUser(userId)
    .update(users)
    .set(rehashColumns(rehash, now))
    .where(eq(users.id, userId))
    .run();
}
