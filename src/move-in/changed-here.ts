import type { ImportedParts, ImportLedgerRow } from "../db/schema";
import type { CheckedUser } from "./user-checks";
import type { Here, UserHere } from "./what-is-here";
import type { RowReason } from "./wire";

/**
 * What the owner did here since an import, read by comparing what earlier runs wrote (the ledger's parts) with what
 * the user's shard holds now (contract supabase.md §6: a delta run never undoes what was done here). Derived from the
 * data, not from hooks in every flow that removes a key or ends a session: whichever path removed it (the account
 * center, the admin API, a password reset dropping factors), it is gone, and that is what counts.
 *
 * - Tombstones: a security key, provider identity or TOTP secret an import wrote and that is gone here.
 *   They are kept in the ledger for good and never written again, whatever Nhost still lists (a key by its row id and
 *   by its credential id, an identity by its row id and by its provider subject).
 * - Credentials changed here (`password`, `sessions`, `mfa`, `keys`, `identities`): such a user gets
 *   nothing new from the old system — no session, PAT, key, identity or pending link — only the in-place rotation of
 *   a session already carried and still alive here. Once seen, kept for good: the evidence (a session gone here while
 *   Nhost still lists it) may not outlive the next run.
 * A phone number is part of the user's row, which is kept as it is here once changed here (user-import.ts `keepRow`);
 * the service has no way to remove one.
 */
export interface ChangesHere {
  tombstones: Set<string>;
  changed: string[];
}

export const NO_PARTS: ImportedParts = {
  providers: [],
  securityKeys: [],
  tokens: {},
  ticketHash: null,
  totpHash: null,
};

export const keyTombstones = (key: { id: string; credentialId: string }) => [
  `key:${key.id}`,
  `credential:${key.credentialId}`,
];
export const identityTombstones = (identity: { id: string; provider: string; providerUserId: string }) => [
  `identity:${identity.id}`,
  `subject:${identity.provider}\n${identity.providerUserId}`,
];
export const isTombstoned = (tombstones: ReadonlySet<string>, names: string[]) =>
  names.some((name) => tombstones.has(name));

/** Nothing of the user was imported before (a first run, or a user created here): nothing can have changed. */
export const NOTHING_CHANGED: ChangesHere = { tombstones: new Set(), changed: [] };

export function changesHere(
  user: CheckedUser,
  before: ImportLedgerRow,
  existing: UserHere,
  here: Here,
  now: number,
): ChangesHere {
  const previous = before.parts ?? NO_PARTS;
  const tombstones = new Set(previous.removedHere ?? []);
  const changed = new Set(previous.changedHere ?? []);

  // The import never writes passwordChangedAt: only a password chosen here (change, reset) sets it.
  if (existing.passwordChangedAt !== null) changed.add("password");

  const keysHere = here.keysOf.get(user.id) ?? [];
  const keyIdsHere = new Set(keysHere.map((key) => key.id));
  for (const id of previous.securityKeys) {
    if (keyIdsHere.has(id)) continue;
    tombstones.add(`key:${id}`);
    const inNhost = user.securityKeys.find((key) => key.id === id);
    if (inNhost) for (const name of keyTombstones(inNhost)) tombstones.add(name);
    changed.add("keys");
  }
  if (keysHere.some((key) => !previous.securityKeys.includes(key.id))) changed.add("keys");

  const identitiesHere = new Set((here.identitiesOf.get(user.id) ?? []).map((identity) => identity.id));
  for (const id of previous.providers) {
    if (identitiesHere.has(id)) continue;
    tombstones.add(`identity:${id}`);
    const inNhost = user.providers.find((identity) => identity.id === id);
    if (inNhost) for (const name of identityTombstones(inNhost)) tombstones.add(name);
    changed.add("identities");
  }

  // The secret an import sealed is gone (MFA turned off or reset here); or TOTP was turned on here after the last
  // run (the import writes Nhost's own time there, from before the run).
  if (previous.totpHash !== null && !existing.hasTotp) {
    tombstones.add(`totp:${previous.totpHash}`);
    changed.add("mfa");
  }
  if (existing.totpEnabledAt !== null && existing.totpEnabledAt > before.importedAt) changed.add("mfa");

  // A session or PAT an import carried, gone here before it expired (signed out, revoked here): ended here. One
  // Nhost still lists is certain; one it no longer lists counts while its recorded expiry has not passed.
  const listed = new Set(user.tokens.map((t) => `${t.kind}:${t.id}`));
  for (const ref of new Set(Object.values(previous.tokens))) {
    if (here.tokensHere.has(ref)) continue;
    if (listed.has(ref) || (previous.expiries?.[ref] ?? 0) > now) changed.add("sessions");
  }
  return { tombstones, changed: [...changed].sort() };
}

/** What a run did not carry on purpose (a tombstone, a credential change here), for the report. */
export type Left = RowReason & { notCarried: boolean };

export const removedHereReason = "removed in this service since an import: not brought back";

/** One reason per user (the report counts its rows under it): what changed here, and that nothing new follows. */
export const afterChangeReason = (userId: string, changed: string[]) =>
  `new in Nhost after user ${userId}'s credentials changed in this service (${changedWords(changed)}): not carried`;

/**
 * The user as this run may carry it: its tombstoned keys and identities left out, and after a credential change here
 * whatever of Nhost's is new (keys, identities, a pending link; sessions and PATs: token-writes.ts). Everything after
 * this (the conflict checks, the directory's claims, the write) sees only what is carried. `left` says what and why.
 */
export function offered(
  user: CheckedUser,
  previous: ImportedParts,
  changes: ChangesHere,
): { user: CheckedUser; left: Left[] } {
  const left: Left[] = [];
  const refuseNew = changes.changed.length > 0;
  const keep = (table: string, id: string, tombstoned: boolean, known: boolean) => {
    if (tombstoned) left.push({ table, id, reason: removedHereReason, notCarried: false });
    else if (refuseNew && !known)
      left.push({ table, id, reason: afterChangeReason(user.id, changes.changed), notCarried: false });
    else return true;
    return false;
  };
  const providers = user.providers.filter((p) =>
    keep(
      "auth.user_providers",
      p.id,
      isTombstoned(changes.tombstones, identityTombstones(p)),
      previous.providers.includes(p.id),
    ),
  );
  const securityKeys = user.securityKeys.filter((k) =>
    keep(
      "auth.user_security_keys",
      k.id,
      isTombstoned(changes.tombstones, keyTombstones(k)),
      previous.securityKeys.includes(k.id),
    ),
  );
  // A pending link made in Nhost after a credential change here (a password reset asked for there) is not carried.
  const ticket =
    user.ticket && !keep("auth.users", user.id, false, user.ticket.hash === previous.ticketHash)
      ? null
      : user.ticket;
  return { user: { ...user, providers, securityKeys, ticket }, left };
}

/** The words of a reason: "password changed, sessions ended". */
export function changedWords(changed: string[]): string {
  const words: Record<string, string> = {
    password: "password changed",
    sessions: "sessions ended",
    mfa: "MFA changed",
    keys: "security keys changed",
    identities: "a provider identity removed",
  };
  return changed.map((what) => words[what] ?? what).join(", ");
}
