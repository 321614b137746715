import { asc, eq } from "drizzle-orm";
import { z } from "zod";
import { deleteSecurityKey } from "../auth";
import { securityKeys } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { requireUser } from "./users";

/**
 * A user's passkeys and security keys as the operator sees them (issue 47, docs/passkeys.md "For the operator"): the
 * admin API's `GET /admin/users/{id}/security-keys` and the console's user page. More than the user's own list
 * (`GET /user/security-keys`): whether a key was made by an automatic upgrade, and whether it has been used with user
 * verification, the rule for `phr` (src/auth/webauthn/upgrade.ts); its backup state (synced or device-bound,
 * src/auth/webauthn/backup-state.ts). Never the public key.
 */
export const adminSecurityKeySchema = z.object({
  id: z.string(),
  nickname: z.string().nullable(),
  /** What the browser said the authenticator speaks (`internal`, `hybrid`, `usb`, …), as registered. */
  transports: z.array(z.string()),
  createdAt: z.iso.datetime(),
  /** Accurate to the hour; null when not used since it was added (or since the column, migration 0043). */
  lastUsedAt: z.iso.datetime().nullable(),
  /** Made by a passkey upgrade (`POST /user/webauthn/add {upgrade:true}`, conditional create), without a gesture. */
  upgrade: z.boolean(),
  /**
   * Whether its sign-ins count as phishing-resistant (`phr`): every key added with a gesture does; an upgrade's only
   * once used with user verification (`userVerifiedAt`, when it first was).
   */
  phishingResistant: z.boolean(),
  userVerifiedAt: z.iso.datetime().nullable(),
  backupEligible: z
    .boolean()
    .nullable()
    .describe(
      "WebAuthn's BE flag (§6.1), as registered: true for a passkey its password manager may sync to the user's " +
        "other devices, false for one bound to its device (a security key). Null: unknown (a key from before, or " +
        "imported, not used since).",
    ),
  backupState: z
    .boolean()
    .nullable()
    .describe(
      "WebAuthn's BS flag (§6.1): backed up (synced) now, as the key's latest sign-in said. Null: unknown.",
    ),
});

export type AdminSecurityKey = z.infer<typeof adminSecurityKeySchema>;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The user's keys, oldest first; 404 `not-found` for an unknown user. */
export async function listUserSecurityKeys(deps: Deps, userId: string): Promise<AdminSecurityKey[]> {
  const user = await requireUser(deps, userId);
  const keys = await deps.shards
    .ofUser(user.id)
    .select()
    .from(securityKeys)
    .where(eq(securityKeys.userId, user.id))
    .orderBy(asc(securityKeys.createdAt));
  return keys.map((key) => ({
    id: key.id,
    nickname: key.nickname,
    transports: key.transports,
    createdAt: iso(key.createdAt)!,
    lastUsedAt: iso(key.lastUsedAt),
    upgrade: key.upgradeSessionId !== null,
    phishingResistant: key.upgradeSessionId === null || key.userVerifiedAt !== null,
    userVerifiedAt: iso(key.userVerifiedAt),
    backupEligible: key.backupEligible,
    backupState: key.backupState,
  }));
}

/**
 * Takes one key off the user, through the same core as the user's own removal (the second step falls back when it
 * was the last key; elevations by it end). 404 `not-found` for an unknown user, or a key id that is not one of
 * theirs: another user's key is never removed through this user's path, and is not told apart from no key.
 */
export async function removeUserSecurityKey(deps: Deps, userId: string, keyId: string): Promise<void> {
  const user = await requireUser(deps, userId);
  if (!(await deleteSecurityKey(deps.shards.ofUser(user.id), user.id, keyId, deps.now()))) {
    throw new AppError("not-found", "the user has no security key with this id");
  }
}
