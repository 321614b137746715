import { and, eq, isNotNull, lt, ne, sql } from "drizzle-orm";
import { type DirectoryEntry, identityEntry, releaseEntries } from "../db/directory";
import { slotOfRouted } from "../db/routed-ids";
import {
  linkExchangeCodes,
  mfaFactors,
  mfaRecoveryCodes,
  mfaTickets,
  oauth2Grants,
  personalAccessTokens,
  securityKeys,
  tickets,
  type UserRow,
  userProviders,
  users,
} from "../db/schema";
import type { Deps } from "../http/deps";
import { credentialsChanged } from "./credential-changes";
import { revokeAllSessions } from "./revocation";
import { mfaTypeWithoutTotp, syncMfaType } from "./second-step";

/**
 * What ends when the credentials of an account change hands or change: outstanding link tickets and codes (a reset
 * or magic link mailed before must not outlive a password reset or an email change), PATs, pending MFA sign-ins,
 * the OAuth2 grants of third-party clients, and every session but `keepSessionId` (the caller's own, when the caller changed their own password).
 * `signOutOthers: false` (a password change or reset that asked to keep them, contract §13) keeps the user's sessions;
 * the rest ends all the same: those are credentials someone else may hold, not devices the user signed in on.
 */
export async function endOutstandingGrants(
  deps: Deps,
  userId: string,
  keepSessionId?: string,
  signOutOthers = true,
): Promise<void> {
  // One batch in the user's shard, which holds every one of these rows.
  const db = deps.shards.ofUser(userId);
  const [endedTickets, endedTokens] = await db.batch([
    db.delete(tickets).where(eq(tickets.userId, userId)).returning({ hash: tickets.ticketHash }),
    db
      .delete(personalAccessTokens)
      .where(eq(personalAccessTokens.userId, userId))
      .returning({ id: personalAccessTokens.id, hash: personalAccessTokens.tokenHash }),
    db.delete(linkExchangeCodes).where(eq(linkExchangeCodes.userId, userId)),
    db.delete(mfaTickets).where(eq(mfaTickets.userId, userId)),
    credentialsChanged(db, userId, deps.now()),
  ]);
  await Promise.all([
    signOutOthers && revokeAllSessions(deps, userId, keepSessionId),
    releaseImported(deps, userId, endedTickets, endedTokens),
  ]);
  // After the sessions: each one's `session.revoked` event names the OAuth2 clients holding a grant from it, which
  // back-channel logout then tells (migration 0024); ending the grants first would leave it no one to tell.
  await db.delete(oauth2Grants).where(eq(oauth2Grants.userId, userId));
}

/**
 * The directory entries of what `endOutstandingGrants` ended that was imported from Nhost (the tickets and PATs the
 * service mints carry their slot and have none). Best effort: a stale entry names a shard where nothing is found.
 */
async function releaseImported(
  deps: Deps,
  userId: string,
  endedTickets: { hash: string }[],
  endedTokens: { id: string; hash: string }[],
): Promise<void> {
  if (deps.shards.count === 1) return;
  const entries: DirectoryEntry[] = [
    // A ticket row keeps no id: every ended ticket's key is given back (at most one per ticket type).
    ...endedTickets.map(({ hash }) => ({ kind: "ticket" as const, value: hash })),
    ...endedTokens
      .filter(({ id }) => slotOfRouted(id) === undefined)
      .map(({ hash }) => ({ kind: "pat" as const, value: hash })),
  ];
  // A few keys a statement: D1 binds at most 100 values.
  for (let start = 0; start < entries.length; start += 50) {
    await releaseEntries(deps.shards, userId, entries.slice(start, start + 50)).catch(() => {});
  }
}

/** How an address was shown to be read by the person now using it. */
export type EmailProof =
  /** The verification link mailed at sign-up (or deanonymize) to the account's own address. */
  | "sign-up-verification"
  /** A magic link, an email code or a password-reset link: someone reads the inbox, whoever set up the account. */
  | "inbox";

/**
 * Marks the user's email verified. The first proof of an address that does not come from its own sign-up
 * verification wipes whatever was set up on the account before anyone proved the address: the password, TOTP,
 * recovery codes, security keys, linked provider identities, PATs, tickets and every session. That is the account
 * pre-hijacking attack (Sudhodanan & Paverd, "Pre-hijacked accounts", 2022): an attacker signs up `victim@x` with a
 * password, a passkey or a provider that does not verify the address it reports (or deanonymizes to it) and waits;
 * when the victim later signs in by magic link or code, or resets the password, the attacker's credentials and
 * sessions must not come along. The verified flag is set by a conditional UPDATE, so of two racing proofs one wipes.
 * Returns the user as it is now.
 */
export async function proveEmail(deps: Deps, user: UserRow, proof: EmailProof): Promise<UserRow> {
  if (user.emailVerified) return user;
  const unverified = and(eq(users.id, user.id), eq(users.emailVerified, false));
  const now = deps.now();
  const firstProof = sql`coalesce(${users.emailVerifiedAt}, ${now})`;
  const db = deps.shards.ofUser(user.id);
  if (proof === "sign-up-verification") {
    const updated = await db
      .update(users)
      .set({ emailVerified: true, emailVerifiedAt: firstProof, updatedAt: now })
      .where(unverified)
      .returning()
      .get();
    return updated ?? user;
  }
  const wiped = await db
    .update(users)
    .set({
      emailVerified: true,
      emailVerifiedAt: firstProof,
      passwordHash: null,
      // A password set before the address was proven is gone: a change of password (the event stream says so).
      passwordChangedAt: user.passwordHash ? now : user.passwordChangedAt,
      activeMfaType: null,
      totpSecret: null,
      totpLastStep: null,
      totpEnabledAt: null,
      updatedAt: now,
    })
    .where(unverified)
    .returning()
    .get();
  if (!wiped) return (await db.select().from(users).where(eq(users.id, user.id)).get()) ?? user;
  const [unlinked] = await db.batch([
    // A provider sign-in that proves the address links its identity after this (src/providers/accounts.ts).
    db
      .delete(userProviders)
      .where(eq(userProviders.userId, user.id))
      .returning({ provider: userProviders.provider, providerUserId: userProviders.providerUserId }),
    db.delete(securityKeys).where(eq(securityKeys.userId, user.id)),
    db.delete(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, user.id)),
    // The factors of the list too (a phone, a `webauthn` key, added through the Supabase face), and the `sms` type
    // one of them may have set since the update above (./second-step.ts).
    db.delete(mfaFactors).where(eq(mfaFactors.userId, user.id)),
    syncMfaType(db, user.id),
  ]);
  await Promise.all([endOutstandingGrants(deps, user.id), releaseIdentities(deps, user.id, unlinked)]);
  return wiped;
}

/** The directory entries of identities unlinked here (best effort: a stale one is taken over, src/db/directory.ts). */
async function releaseIdentities(
  deps: Deps,
  userId: string,
  unlinked: { provider: string; providerUserId: string }[],
): Promise<void> {
  const entries = unlinked.map((row) => identityEntry(row.provider, row.providerUserId));
  await releaseEntries(deps.shards, userId, entries).catch(() => {});
}

/**
 * A password reset also drops the security keys, the TOTP, the other second factors (a phone, a `webauthn` key,
 * added through the Supabase face) and the linked provider identities that were added before the address was first
 * proven.
 * The residue of pre-hijacking this closes: an attacker signs up `victim@x` (a password, a passkey; with verification
 * off also TOTP), the victim follows the sign-up verification mail (which keeps them, as it must for a genuine
 * sign-up) and later resets the password to take the account back: the attacker's second way in must go with the
 * old password. An owner who set these up before verifying sets them up again. Accounts verified before
 * `email_verified_at` existed have none recorded, and lose nothing.
 */
export async function dropFactorsFromBeforeProof(deps: Deps, userId: string): Promise<void> {
  const db = deps.shards.ofUser(userId);
  const provenAt = sql`(SELECT ${users.emailVerifiedAt} FROM ${users} WHERE ${users.id} = ${userId})`;
  const [unlinked] = await db.batch([
    db
      .delete(userProviders)
      .where(and(eq(userProviders.userId, userId), lt(userProviders.createdAt, provenAt)))
      .returning({ provider: userProviders.provider, providerUserId: userProviders.providerUserId }),
    db.delete(securityKeys).where(and(eq(securityKeys.userId, userId), lt(securityKeys.createdAt, provenAt))),
    // Every kind of factor (a phone, a `webauthn` key): the TOTP one is the user's row's, below.
    db
      .delete(mfaFactors)
      .where(
        and(
          eq(mfaFactors.userId, userId),
          ne(mfaFactors.factorType, "totp"),
          lt(mfaFactors.createdAt, provenAt),
        ),
      ),
    db
      .update(users)
      .set({
        // A phone factor of after the proof stays the second factor (`sms`).
        activeMfaType: mfaTypeWithoutTotp(userId),
        totpSecret: null,
        totpLastStep: null,
        totpEnabledAt: null,
        updatedAt: deps.now(),
      })
      .where(
        and(
          eq(users.id, userId),
          isNotNull(users.emailVerifiedAt),
          lt(users.totpEnabledAt, users.emailVerifiedAt),
        ),
      ),
    db.delete(mfaRecoveryCodes).where(
      and(
        eq(mfaRecoveryCodes.userId, userId),
        // TOTP's own: they go with it (a remaining phone factor makes the type `sms`, not null).
        sql`exists (SELECT 1 FROM ${users} WHERE ${users.id} = ${userId} AND ${users.activeMfaType} IS NOT 'totp')`,
      ),
    ),
    // A phone factor dropped above may have been the `sms` type, with TOTP not dropped (or never on).
    syncMfaType(db, userId),
  ]);
  await releaseIdentities(deps, userId, unlinked);
}
