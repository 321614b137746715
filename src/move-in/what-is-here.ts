import { inArray, sql } from "drizzle-orm";
import { type ImportLedgerRow, securityKeys, userProviders, users } from "../db/schema";
import type { Deps } from "../http/deps";
import { ledgerRows, slices } from "./ledger";
import type { CheckedUser } from "./user-checks";

/** What the service already holds for a batch, read in bulk (a few statements for 100 users). */
export interface Here {
  ledger: Map<string, ImportLedgerRow>;
  /** `totpMissing`: TOTP on without a secret (one an earlier run could not read). */
  usersById: Map<string, { updatedAt: number; totpMissing: boolean }>;
  userByEmail: Map<string, string>;
  userByPhone: Map<string, string>;
  tokenOwners: Map<string, ImportLedgerRow>;
  keyOwners: Map<string, string>;
  identityOwners: Map<string, string>;
}

export async function readWhatIsHere(deps: Deps, batch: CheckedUser[]): Promise<Here> {
  const { db } = deps;
  const ids = batch.map((u) => u.id);
  const emails = batch.flatMap((u) => (u.row.email ? [u.row.email] : []));
  const phones = batch.flatMap((u) => (u.row.phoneNumber ? [u.row.phoneNumber] : []));
  const credentialIds = batch.flatMap((u) => u.securityKeys.map((k) => k.credentialId));
  const providerUserIds = batch.flatMap((u) => u.providers.map((p) => p.providerUserId));
  const each = async <T>(values: string[], read: (part: string[]) => Promise<T[]>) =>
    (await Promise.all(slices([...new Set(values)]).map(read))).flat();
  const [ledger, tokenOwners, here, byEmail, byPhone, keys, identities] = await Promise.all([
    ledgerRows(db, "user", ids),
    ledgerRows(
      db,
      "token",
      batch.flatMap((u) => u.tokens.map((t) => t.hash)),
    ),
    each(ids, (part) =>
      db
        .select({
          id: users.id,
          updatedAt: users.updatedAt,
          totpMissing: sql<number>`${users.activeMfaType} = 'totp' AND ${users.totpSecret} IS NULL`,
        })
        .from(users)
        .where(inArray(users.id, part))
        .all(),
    ),
    each(emails, (part) =>
      db.select({ id: users.id, email: users.email }).from(users).where(inArray(users.email, part)).all(),
    ),
    each(phones, (part) =>
      db
        .select({ id: users.id, phone: users.phoneNumber })
        .from(users)
        .where(inArray(users.phoneNumber, part))
        .all(),
    ),
    each(credentialIds, (part) =>
      db
        .select({ credentialId: securityKeys.credentialId, userId: securityKeys.userId })
        .from(securityKeys)
        .where(inArray(securityKeys.credentialId, part))
        .all(),
    ),
    each(providerUserIds, (part) =>
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
  return {
    ledger,
    tokenOwners,
    usersById: new Map(
      here.map((u) => [u.id, { updatedAt: u.updatedAt, totpMissing: Boolean(u.totpMissing) }]),
    ),
    userByEmail: new Map(byEmail.map((u) => [u.email!, u.id])),
    userByPhone: new Map(byPhone.map((u) => [u.phone!, u.id])),
    keyOwners: new Map(keys.map((k) => [k.credentialId, k.userId])),
    identityOwners: new Map(identities.map((i) => [`${i.provider}\n${i.subject}`, i.userId])),
  };
}
