import { inArray, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { type DirectoryEntry, ownersOfMany, readsDirectory } from "../db/directory";
import {
  type ImportLedgerRow,
  personalAccessTokens,
  securityKeys,
  sessions,
  userProviders,
  users,
} from "../db/schema";
import { eachShard, type Shards } from "../db/shards";
import type { Deps } from "../http/deps";
import { ledgerRows, slices } from "./ledger";
import type { CheckedUser } from "./user-checks";

/**
 * What the service already holds for a batch, read in bulk (a few statements for 100 users). A user's own rows, and
 * the ledger rows earlier runs wrote for it, are in its shard (src/db/shards.ts); who holds an email, a number or an
 * identity the directory says, with several shards, and that user's shard confirms.
 */
export interface Here {
  ledger: Map<string, ImportLedgerRow>;
  /** `totpMissing`: TOTP on without a secret (one an earlier run could not read). */
  usersById: Map<string, UserHere>;
  userByEmail: Map<string, string>;
  userByPhone: Map<string, string>;
  tokenOwners: Map<string, ImportLedgerRow>;
  keyOwners: Map<string, string>;
  identityOwners: Map<string, string>;
  /** The identities each user of the batch has here (imported or linked here): those an update removes go back. */
  identitiesOf: Map<string, { id: string; provider: string; providerUserId: string }[]>;
  /** The security keys each user of the batch has here. */
  keysOf: Map<string, { id: string; credentialId: string }[]>;
  /** Of the sessions and PATs Nhost lists for the batch, those that exist here: `regular:<id>`, `pat:<id>`. */
  tokensHere: Set<string>;
}

/** A user's row as the import compares it (changed-here.ts reads the credential columns). */
export interface UserHere {
  updatedAt: number;
  totpMissing: boolean;
  email: string | null;
  phoneNumber: string | null;
  passwordChangedAt: number | null;
  totpEnabledAt: number | null;
  hasTotp: boolean;
}

/** Items grouped by the index of the shard of the user each belongs to. */
export function byShard<T>(
  shards: Shards,
  items: readonly T[],
  userOf: (item: T) => string,
): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const index = shards.indexOfUser(userOf(item));
    groups.set(index, [...(groups.get(index) ?? []), item]);
  }
  return groups;
}

const each = async <T>(values: string[], read: (part: string[]) => Promise<T[]>) =>
  (await Promise.all(slices([...new Set(values)]).map(read))).flat();

/** The batch's users as one shard has them: their rows, identities and what earlier runs wrote for them. */
async function readOwn(db: Db, batch: CheckedUser[]) {
  const ids = batch.map((u) => u.id);
  const ledger = await ledgerRows(db, "user", ids);
  // The sessions and PATs Nhost lists now, and those earlier runs carried: which of them exist here.
  const refs = [
    ...batch.flatMap((u) => u.tokens.map((t) => `${t.kind}:${t.id}`)),
    ...[...ledger.values()].flatMap((row) => Object.values(row.parts?.tokens ?? {})),
  ];
  const tokenIds = (kind: "regular" | "pat") =>
    refs.filter((ref) => ref.startsWith(`${kind}:`)).map((ref) => ref.slice(kind.length + 1));
  const [tokenOwners, rows, identities, keys, sessionsHere, patsHere] = await Promise.all([
    ledgerRows(
      db,
      "token",
      batch.flatMap((u) => u.tokens.flatMap((t) => [t.hash, ...(t.retryHashes ?? [])])),
    ),
    each(ids, (part) =>
      db
        .select({
          id: users.id,
          updatedAt: users.updatedAt,
          email: users.email,
          phoneNumber: users.phoneNumber,
          totpMissing: sql<number>`${users.activeMfaType} = 'totp' AND ${users.totpSecret} IS NULL`,
          passwordChangedAt: users.passwordChangedAt,
          totpEnabledAt: users.totpEnabledAt,
          hasTotp: sql<number>`${users.totpSecret} IS NOT NULL`,
        })
        .from(users)
        .where(inArray(users.id, part))
        .all(),
    ),
    each(ids, (part) =>
      db
        .select({
          id: userProviders.id,
          userId: userProviders.userId,
          provider: userProviders.provider,
          providerUserId: userProviders.providerUserId,
        })
        .from(userProviders)
        .where(inArray(userProviders.userId, part))
        .all(),
    ),
    each(ids, (part) =>
      db
        .select({ id: securityKeys.id, userId: securityKeys.userId, credentialId: securityKeys.credentialId })
        .from(securityKeys)
        .where(inArray(securityKeys.userId, part))
        .all(),
    ),
    each(tokenIds("regular"), (part) =>
      db.select({ id: sessions.id }).from(sessions).where(inArray(sessions.id, part)).all(),
    ),
    each(tokenIds("pat"), (part) =>
      db
        .select({ id: personalAccessTokens.id })
        .from(personalAccessTokens)
        .where(inArray(personalAccessTokens.id, part))
        .all(),
    ),
  ]);
  const tokensHere = [
    ...sessionsHere.map((row) => `regular:${row.id}`),
    ...patsHere.map((row) => `pat:${row.id}`),
  ];
  return { ledger, tokenOwners, rows, identities, keys, tokensHere };
}

interface Wanted {
  emails: string[];
  phones: string[];
  /** Identities as `<provider>:<provider user id>`. */
  identities: string[];
}

/** Which users of one database hold these emails, numbers and identities. */
async function holdersIn(db: Db, wanted: Wanted) {
  const subjects = wanted.identities.map((identity) => identity.slice(identity.indexOf(":") + 1));
  const [byEmail, byPhone, identities] = await Promise.all([
    each(wanted.emails, (part) =>
      db.select({ id: users.id, email: users.email }).from(users).where(inArray(users.email, part)).all(),
    ),
    each(wanted.phones, (part) =>
      db
        .select({ id: users.id, phone: users.phoneNumber })
        .from(users)
        .where(inArray(users.phoneNumber, part))
        .all(),
    ),
    each(subjects, (part) =>
      db
        .select({
          provider: userProviders.provider,
          subject: userProviders.providerUserId,
          userId: userProviders.userId,
        })
        .from(userProviders)
        .where(inArray(userProviders.providerUserId, part))
        .all(),
    ),
  ]);
  return { byEmail, byPhone, identities };
}

/**
 * The holders of the batch's emails, numbers and identities: with one shard, in it; with several, in the shard of
 * the user the directory names for each (a key whose user no longer holds the value names no holder).
 */
async function readHolders(shards: Shards, wanted: Wanted) {
  if (!readsDirectory(shards)) return [await holdersIn(shards.home, wanted)];
  const entries: DirectoryEntry[] = [
    ...wanted.emails.map((value) => ({ kind: "email" as const, value })),
    ...wanted.phones.map((value) => ({ kind: "phone" as const, value })),
    ...wanted.identities.map((value) => ({ kind: "provider" as const, value })),
  ];
  const owners = await ownersOfMany(shards, entries);
  const located = byShard(
    shards,
    entries.filter((entry) => owners.has(`${entry.kind}:${entry.value}`)),
    (entry) => owners.get(`${entry.kind}:${entry.value}`)!,
  );
  const valuesOf = (list: DirectoryEntry[], kind: DirectoryEntry["kind"]) =>
    list.filter((entry) => entry.kind === kind).map((entry) => entry.value);
  return eachShard(shards, (db, index) => {
    const here = located.get(index) ?? [];
    return holdersIn(db, {
      emails: valuesOf(here, "email"),
      phones: valuesOf(here, "phone"),
      identities: valuesOf(here, "provider"),
    });
  });
}

export async function readWhatIsHere(deps: Deps, batch: CheckedUser[]): Promise<Here> {
  const { shards } = deps;
  const groups = byShard(shards, batch, (user) => user.id);
  const credentialIds = [...new Set(batch.flatMap((u) => u.securityKeys.map((k) => k.credentialId)))];
  const [own, holders, keys] = await Promise.all([
    eachShard(shards, async (db, index) => (groups.has(index) ? readOwn(db, groups.get(index)!) : null)),
    readHolders(shards, {
      emails: batch.flatMap((u) => (u.row.email ? [u.row.email] : [])),
      phones: batch.flatMap((u) => (u.row.phoneNumber ? [u.row.phoneNumber] : [])),
      identities: batch.flatMap((u) => u.providers.map((p) => `${p.provider}:${p.providerUserId}`)),
    }),
    // Credential ids have no directory key (a key is found through its user): every shard is asked, for the
    // rare batch that carries security keys.
    credentialIds.length === 0
      ? []
      : eachShard(shards, (db) =>
          each(credentialIds, (part) =>
            db
              .select({ credentialId: securityKeys.credentialId, userId: securityKeys.userId })
              .from(securityKeys)
              .where(inArray(securityKeys.credentialId, part))
              .all(),
          ),
        ).then((parts) => parts.flat()),
  ]);
  const parts = own.filter((part): part is NonNullable<typeof part> => part !== null);
  const identitiesOf = new Map<string, { id: string; provider: string; providerUserId: string }[]>();
  for (const { userId, ...identity } of parts.flatMap((part) => part.identities)) {
    identitiesOf.set(userId, [...(identitiesOf.get(userId) ?? []), identity]);
  }
  const keysOf = new Map<string, { id: string; credentialId: string }[]>();
  for (const { userId, ...key } of parts.flatMap((part) => part.keys)) {
    keysOf.set(userId, [...(keysOf.get(userId) ?? []), key]);
  }
  return {
    ledger: new Map(parts.flatMap((part) => [...part.ledger])),
    tokenOwners: new Map(parts.flatMap((part) => [...part.tokenOwners])),
    usersById: new Map(
      parts
        .flatMap((part) => part.rows)
        .map((u) => [
          u.id,
          {
            updatedAt: u.updatedAt,
            totpMissing: Boolean(u.totpMissing),
            email: u.email,
            phoneNumber: u.phoneNumber,
            passwordChangedAt: u.passwordChangedAt,
            totpEnabledAt: u.totpEnabledAt,
            hasTotp: Boolean(u.hasTotp),
          },
        ]),
    ),
    userByEmail: new Map(holders.flatMap((h) => h.byEmail).map((u) => [u.email!, u.id])),
    userByPhone: new Map(holders.flatMap((h) => h.byPhone).map((u) => [u.phone!, u.id])),
    keyOwners: new Map(keys.map((k) => [k.credentialId, k.userId])),
    identityOwners: new Map(
      holders.flatMap((h) => h.identities).map((i) => [`${i.provider}\n${i.subject}`, i.userId]),
    ),
    identitiesOf,
    keysOf,
    tokensHere: new Set(parts.flatMap((part) => part.tokensHere)),
  };
}
