import type { ImportedParts, ImportLedgerRow } from "../db/schema";
import type { CheckedUser } from "./user-checks";
import type { Here, UserHere } from "./what-is-here";

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
