import { eq } from "drizzle-orm";
import { identifiersOf } from "../auth";
import { releaseEntries } from "../db/directory";
import {
  mfaFactors,
  mfaRecoveryCodes,
  personalAccessTokens,
  securityKeys,
  tickets,
  type UserRow,
  userProviders,
  users,
} from "../db/schema";
import type { Deps } from "../http/deps";
import { sha256Hex } from "../lib/crypto";
import { endAccess, requireUser } from "./users";

/**
 * GoTrue's soft deletion (`auth.admin.deleteUser(id, true)`, its `should_soft_delete`): the user's row stays (its id,
 * its files' owner, its history in the audit), but nothing of the person or their credentials does. The email and
 * phone become hashes bound to the user (GoTrue's `obfuscateEmail`), so the address is free for a new account and
 * its directory entries are given back; the password, profile, metadata, second factors, passkeys, provider links,
 * tokens and open links go; every session and grant ends; the account stays disabled for good. Soft-deleting again
 * changes nothing (GoTrue answers as before).
 */
export async function softDeleteUser(deps: Deps, userId: string): Promise<UserRow> {
  const user = await requireUser(deps, userId);
  if (user.deletedAt !== null) return user;
  await endAccess(deps, userId);
  const hidden = async (value: string | null) =>
    value === null ? null : `deleted-${(await sha256Hex(`${userId}:${value}`)).slice(0, 32)}`;
  // Still an address in form (under the reserved `.invalid`, RFC 2606): the Postgres mirror's `auth.users.email` is
  // Nhost's `auth.email` domain, which refuses anything else, and would refuse the row on every resync.
  const hiddenEmail = async (value: string | null) =>
    value === null ? null : `${await hidden(value)}@deleted.invalid`;
  const now = deps.now();
  const db = deps.shards.ofUser(userId);
  const [kept] = await db.batch([
    db
      .update(users)
      .set({
        email: await hiddenEmail(user.email),
        newEmail: null,
        phoneNumber: await hidden(user.phoneNumber),
        passwordHash: null,
        displayName: "",
        avatarUrl: "",
        metadata: {},
        activeMfaType: null,
        totpSecret: null,
        totpLastStep: null,
        totpEnabledAt: null,
        disabled: true,
        bannedUntil: null,
        deletedAt: now,
        credentialsChangedAt: now,
        updatedAt: now,
      })
      .where(eq(users.id, userId))
      .returning(),
    db.delete(mfaFactors).where(eq(mfaFactors.userId, userId)),
    db.delete(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, userId)),
    db.delete(securityKeys).where(eq(securityKeys.userId, userId)),
    db.delete(userProviders).where(eq(userProviders.userId, userId)),
    db.delete(personalAccessTokens).where(eq(personalAccessTokens.userId, userId)),
    db.delete(tickets).where(eq(tickets.userId, userId)),
  ]);
  // The old email and number are free again: a stale entry would be taken over by the next claim anyway.
  await releaseEntries(deps.shards, userId, identifiersOf(user)).catch(() => {});
  return kept[0] ?? user;
}
