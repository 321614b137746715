import type { WebAuthnCredential } from "@simplewebauthn/server";
import { isoBase64URL } from "@simplewebauthn/server/helpers";
import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { isUniqueViolation } from "../../db/errors";
import { securityKeys, type securityKeys as securityKeysTable } from "../../db/schema";
import { randomUuid } from "../../lib/crypto";
import { credentialsChanged } from "../credential-changes";
import { syncMfaType } from "../second-step";
import { type BackupFlags, type BackupState, backupColumns, backupStateOf } from "./backup-state";
import { ceremonyFailed } from "./ceremonies";
import { upgradeAlreadyMade } from "./upgrade";

type SecurityKeyRow = typeof securityKeysTable.$inferSelect;

export function keysOfUser(db: Db, userId: string): Promise<SecurityKeyRow[]> {
  return db.select().from(securityKeys).where(eq(securityKeys.userId, userId)).all();
}

export async function userHasSecurityKey(db: Db, userId: string): Promise<boolean> {
  const row = await db
    .select({ id: securityKeys.id })
    .from(securityKeys)
    .where(eq(securityKeys.userId, userId))
    .limit(1)
    .get();
  return row !== undefined;
}

export function keyByCredentialId(db: Db, credentialId: string): Promise<SecurityKeyRow | undefined> {
  return db.select().from(securityKeys).where(eq(securityKeys.credentialId, credentialId)).get();
}

/** The stored key in the library's shape, for verifying an assertion. */
export function asCredential(key: SecurityKeyRow): WebAuthnCredential {
  return {
    id: key.credentialId,
    publicKey: isoBase64URL.toBuffer(key.publicKey),
    counter: key.counter,
    transports: key.transports as WebAuthnCredential["transports"],
  };
}

/** Options entries (`allowCredentials`, `excludeCredentials`) for a user's keys. */
export function descriptors(keys: SecurityKeyRow[]) {
  return keys.map((key) => ({ id: key.credentialId, transports: key.transports }));
}

/** A registration the library verified: the credential, and its backup flags (backup-state.ts). */
export interface VerifiedCreation {
  credential: WebAuthnCredential;
  backup: BackupFlags;
}

/** The insert that registers a verified credential; a credential already registered (to anyone) is refused. */
function insertSecurityKey(
  db: Db,
  userId: string,
  { credential, backup }: VerifiedCreation,
  nickname: string | undefined,
  now: number,
  upgradeSessionId?: string,
) {
  return db.insert(securityKeys).values({
    id: randomUuid(),
    userId,
    credentialId: credential.id,
    publicKey: isoBase64URL.fromBuffer(credential.publicKey),
    counter: credential.counter,
    transports: credential.transports ?? [],
    nickname: nickname ?? null,
    createdAt: now,
    upgradeSessionId: upgradeSessionId ?? null,
    ...backupColumns(backup),
  });
}

/** Whether an error (or one of its causes) names `column`: which unique index refused an insert. */
function mentions(error: unknown, column: string): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) if (e.message.includes(column)) return true;
  return false;
}

export async function registerSecurityKey(
  db: Db,
  userId: string,
  made: VerifiedCreation,
  nickname: string | undefined,
  now: number,
  upgradeSessionId?: string,
): Promise<SecurityKeyRow> {
  try {
    const [[key]] = await db.batch([
      insertSecurityKey(db, userId, made, nickname, now, upgradeSessionId).returning(),
      credentialsChanged(db, userId, now),
    ]);
    return key!;
  } catch (error) {
    // Two upgrades of one session raced past upgradeAllowed: the index keeps one.
    if (isUniqueViolation(error) && mentions(error, "upgrade_session_id")) throw upgradeAlreadyMade();
    if (isUniqueViolation(error)) throw ceremonyFailed("credential is already registered", "registered");
    throw error;
  }
}

/** What a user sees of their own keys (never the public key). */
export interface WireSecurityKey {
  id: string;
  nickname: string | null;
  transports: string[];
  createdAt: string;
}

export async function listSecurityKeys(db: Db, userId: string): Promise<WireSecurityKey[]> {
  const keys = await keysOfUser(db, userId);
  return keys.sort((a, b) => a.createdAt - b.createdAt).map(wireKey);
}

const wireKey = (key: SecurityKeyRow): WireSecurityKey => ({
  id: key.id,
  nickname: key.nickname,
  transports: key.transports,
  createdAt: new Date(key.createdAt).toISOString(),
});

/**
 * The user's keys with their backup state (synced, device-bound, … backup-state.ts): the account center's list. The
 * API's `GET /user/security-keys` answers `WireSecurityKey`, as it always has.
 */
export type SecurityKeyWithBackup = WireSecurityKey & { backup: BackupState };

export async function listSecurityKeysWithBackup(db: Db, userId: string): Promise<SecurityKeyWithBackup[]> {
  const keys = await keysOfUser(db, userId);
  return keys
    .sort((a, b) => a.createdAt - b.createdAt)
    .map((key) => ({ ...wireKey(key), backup: backupStateOf(key) }));
}

/**
 * Renames one of the user's keys (GoTrue's `passkey.update`); undefined when the user has no key with that id. A
 * nickname is no credential: nothing else changes.
 */
export async function renameSecurityKey(
  db: Db,
  userId: string,
  id: string,
  nickname: string,
): Promise<WireSecurityKey | undefined> {
  const renamed = await db
    .update(securityKeys)
    .set({ nickname })
    .where(and(eq(securityKeys.id, id), eq(securityKeys.userId, userId)))
    .returning()
    .get();
  return renamed && wireKey(renamed);
}

/** Removes one of the user's keys; false when the user has no key with that id (someone else's included). */
export async function deleteSecurityKey(
  db: Db,
  userId: string,
  id: string,
  now = Date.now(),
): Promise<boolean> {
  const removed = await db
    .delete(securityKeys)
    .where(and(eq(securityKeys.id, id), eq(securityKeys.userId, userId)))
    .returning({ id: securityKeys.id })
    .get();
  if (removed) {
    // The last key gone, a passkey chosen as the second step is no step: the choice falls back (../second-step.ts).
    await db.batch([credentialsChanged(db, userId, now), syncMfaType(db, userId)]);
  }
  return removed !== undefined;
}
