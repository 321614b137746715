import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import {
  type ImportedParts,
  type ImportLedgerRow,
  type ImportSystem,
  importLedger,
  mfaFactors,
  securityKeys,
  tickets,
  userProviders,
  users,
} from "../db/schema";
import type { Deps } from "../http/deps";
import { encrypt, sha256Hex } from "../lib/crypto";
import { afterChangeReason, type ChangesHere, type Left, NO_PARTS } from "./changed-here";
import { tokenStatements } from "./token-writes";
import type { CheckedUser } from "./user-checks";
import type { Here } from "./what-is-here";

export type Statement = BatchItem<"sqlite">;

/**
 * The statements that write one user whole: its row (unless `keepRow`: changed here since the last run), what Nhost
 * removed since the last run removed here, its providers, keys, new tokens, ticket, and its ledger rows. All go to the
 * user's shard, ledger rows included: one batch there writes the user and the record that it was written, or neither,
 * so a run cut short between two databases can never leave a user the next run takes for one created here. Also
 * returns the user's tokens after the write (hash → ref), for the directory (user-entries.ts); the rows newly written
 * (`carried`) and those left on purpose (`left`: removed here, or new in Nhost after a credential change here,
 * changed-here.ts), for the report.
 */
export async function writeUser(
  deps: Deps,
  user: CheckedUser,
  before: ImportLedgerRow | undefined,
  here: Here,
  now: number,
  keepRow: boolean,
  changes: ChangesHere,
  system: ImportSystem,
): Promise<{
  statements: Statement[];
  tokens: Record<string, string>;
  carried: { table: string; id: string }[];
  left: Left[];
}> {
  const db = deps.shards.ofUser(user.id);
  const previous: ImportedParts = before?.parts ?? NO_PARTS;
  const { tombstones } = changes;
  const refuseNew = changes.changed.length > 0;
  const carried: { table: string; id: string }[] = [];
  const left: Left[] = [];
  // A later run without Nhost's key can't read the secret: the one an earlier run imported stays. A row kept as it
  // is here still gets the secret it lacks (MFA on, unreadable by an earlier run) once a run can read it: a sign-in
  // attempt rehashing the password must not leave the user locked out for good.
  const nhostTotpHash = user.totpSecret ? await sha256Hex(user.totpSecret) : null;
  // A secret removed here (MFA turned off or reset) is never sealed again.
  const totpRemovedHere = nhostTotpHash !== null && tombstones.has(`totp:${nhostTotpHash}`);
  const fillTotp =
    keepRow &&
    !totpRemovedHere &&
    here.usersById.get(user.id)?.totpMissing === true &&
    user.totpSecret !== null;
  const keepTotp =
    (keepRow && !fillTotp) ||
    totpRemovedHere ||
    (user.totpSecret === null && user.totpUnreadable && previous.totpHash !== null);
  const totpHash = keepTotp ? previous.totpHash : nhostTotpHash;
  const totpChanged = !keepTotp && (!before || previous.totpHash !== totpHash);
  const totp = totpChanged
    ? {
        totpSecret: user.totpSecret
          ? await encrypt(deps.config.secrets.encryptionKey, user.totpSecret)
          : null,
        totpLastStep: null,
        totpEnabledAt: user.row.activeMfaType === "totp" ? user.row.updatedAt : null,
      }
    : {};
  const row = { ...user.row, ...totp };
  const statements: Statement[] = fillTotp
    ? [
        db
          .update(users)
          .set(totp)
          .where(and(eq(users.id, user.id), isNull(users.totpSecret))),
      ]
    : keepRow
      ? []
      : [
          db
            .insert(users)
            .values({ id: user.id, ...row })
            .onConflictDoUpdate({ target: users.id, set: row }),
        ];

  // `user` is what this run carries (changed-here.ts `offered`): tombstoned and refused keys and identities are out.
  const providerIds = user.providers.map((p) => p.id);
  for (const id of providerIds)
    if (!previous.providers.includes(id)) carried.push({ table: "auth.user_providers", id });
  const gone = (old: string[], now: string[]) => old.filter((id) => !now.includes(id));
  if (gone(previous.providers, providerIds).length)
    statements.push(
      db.delete(userProviders).where(inArray(userProviders.id, gone(previous.providers, providerIds))),
    );
  for (const p of user.providers)
    statements.push(
      db
        .insert(userProviders)
        .values({ ...p, userId: user.id })
        .onConflictDoUpdate({
          target: userProviders.id,
          set: { provider: p.provider, providerUserId: p.providerUserId, updatedAt: p.updatedAt },
        }),
    );

  const keyIds = user.securityKeys.map((k) => k.id);
  for (const id of keyIds)
    if (!previous.securityKeys.includes(id)) carried.push({ table: "auth.user_security_keys", id });
  if (gone(previous.securityKeys, keyIds).length)
    statements.push(
      db.delete(securityKeys).where(inArray(securityKeys.id, gone(previous.securityKeys, keyIds))),
    );
  for (const k of user.securityKeys)
    statements.push(
      db
        .insert(securityKeys)
        .values({ ...k, userId: user.id, createdAt: user.row.createdAt })
        // A counter that moved on here is never lowered: it is what tells a cloned authenticator.
        .onConflictDoUpdate({
          target: securityKeys.id,
          set: {
            nickname: k.nickname,
            transports: k.transports,
            counter: sql`max(${securityKeys.counter}, excluded.counter)`,
          },
        }),
    );

  statements.push(...factorStatements(db, user, previous, keepRow));

  const written = tokenStatements(
    db,
    user,
    previous.tokens,
    new Set(here.tokenOwners.keys()),
    now,
    { refuseNew, present: here.tokensHere },
    system,
  );
  const { tokens } = written;
  statements.push(...written.statements);
  for (const t of written.carried) carried.push({ table: "auth.refresh_tokens", id: t.id });
  for (const t of written.refused)
    left.push({
      table: "auth.refresh_tokens",
      id: t.id,
      reason: afterChangeReason(user.id, changes.changed),
      notCarried: false,
    });

  if (previous.ticketHash && previous.ticketHash !== user.ticket?.hash)
    statements.push(db.delete(tickets).where(eq(tickets.ticketHash, previous.ticketHash)));
  if (user.ticket && user.ticket.hash !== previous.ticketHash)
    statements.push(
      db
        .insert(tickets)
        .values({
          userId: user.id,
          type: user.ticket.type,
          ticketHash: user.ticket.hash,
          expiresAt: user.ticket.expiresAt,
        })
        .onConflictDoUpdate({
          target: [tickets.userId, tickets.type],
          set: { ticketHash: user.ticket.hash, expiresAt: user.ticket.expiresAt, codeChallenge: null },
        }),
    );

  const parts: ImportedParts = {
    providers: providerIds,
    securityKeys: keyIds,
    tokens,
    ticketHash: user.ticket?.hash ?? null,
    totpHash,
    ...(user.factors ? { factors: keepRow ? (previous.factors ?? []) : user.factors.map((f) => f.id) } : {}),
    expiries: Object.fromEntries(
      user.tokens.filter((t) => tokens[t.hash]).map((t) => [tokens[t.hash]!, t.expiresAt]),
    ),
    ...(tombstones.size > 0 ? { removedHere: [...tombstones].sort() } : {}),
    ...(changes.changed.length > 0 ? { changedHere: changes.changed } : {}),
  };
  const ledgerRow = {
    fingerprint: user.fingerprint,
    rowUpdatedAt: keepRow ? before!.rowUpdatedAt : user.row.updatedAt,
    parts,
    importedAt: now,
  };
  statements.push(
    db
      .insert(importLedger)
      .values({ kind: "user", id: user.id, system, ...ledgerRow })
      .onConflictDoUpdate({ target: [importLedger.kind, importLedger.id], set: ledgerRow }),
  );
  return { statements, tokens, carried, left };
}

/**
 * Supabase's factors under their own ids (absent for Nhost's users, whose one TOTP factor is named at its first
 * listing). Written with the user's row only: a row kept as it is here keeps its factors too. A TOTP factor holds the
 * same sealed secret as the user's row, just written in this batch, which is how the core knows it is the current one
 * (src/auth/mfa/factor-reads.ts); a factor an earlier run imported and Supabase no longer has goes.
 */
function factorStatements(
  db: ReturnType<Deps["shards"]["ofUser"]>,
  user: CheckedUser,
  previous: ImportedParts,
  keepRow: boolean,
): Statement[] {
  if (!user.factors || keepRow) return [];
  const ids = user.factors.map((f) => f.id);
  const gone = (previous.factors ?? []).filter((id) => !ids.includes(id));
  const statements: Statement[] = gone.length
    ? [db.delete(mfaFactors).where(and(eq(mfaFactors.userId, user.id), inArray(mfaFactors.id, gone)))]
    : [];
  for (const factor of user.factors) {
    const { key, ...row } = factor;
    const secret =
      factor.factorType === "totp"
        ? sql`(SELECT ${users.totpSecret} FROM ${users} WHERE ${users.id} = ${user.id})`
        : key
          ? JSON.stringify(key)
          : null;
    const values = { ...row, userId: user.id, secret };
    statements.push(
      db
        .insert(mfaFactors)
        .values(values)
        .onConflictDoUpdate({
          target: mfaFactors.id,
          set: {
            friendlyName: factor.friendlyName,
            status: factor.status,
            phone: factor.phone,
            secret,
          },
          // Another user's factor of the same id is never taken over.
          setWhere: eq(mfaFactors.userId, user.id),
        }),
    );
  }
  return statements;
}
