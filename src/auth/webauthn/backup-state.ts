import type { CredentialDeviceType } from "@simplewebauthn/server";
import type { securityKeys } from "../../db/schema";
import { ceremonyFailed } from "./ceremonies";

/**
 * A passkey's backup state (WebAuthn L3 §6.1 flags BE, "backup eligible", and BS, "backed up"; the credential record's
 * `backupEligible` and `backupState`, §4): whether the authenticator may sync the credential to the user's other
 * devices (a password manager's passkey) or keeps it on this one (a security key, a device-bound platform key), and
 * whether it is synced now. Both come with every registration and every assertion; SimpleWebAuthn reads them as
 * `credentialDeviceType` (`multiDevice` is BE=1) and `credentialBackedUp` (BS), and refuses BE=0 with BS=1 (§6.1:
 * a credential that cannot be backed up is not backed up), which answers the ceremony's 400.
 *
 * Stored on `security_keys` (`backup_eligible`, `backup_state`): BE as registered, BS as the latest assertion said
 * (a passkey made on a device and synced later turns BS on). A key from before the columns, or imported, has both null
 * until its next use: shown as "unknown", never guessed (docs/passkeys.md, "Backup state").
 */

export interface BackupFlags {
  eligible: boolean;
  state: boolean;
}

/** What the lists show: `synced` (BE=1, BS=1), `not-synced` (BE=1, BS=0), `device-bound` (BE=0), or `unknown`. */
export type BackupState = "synced" | "not-synced" | "device-bound" | "unknown";

type SecurityKeyRow = typeof securityKeys.$inferSelect;

/** The flags as SimpleWebAuthn reports them, for a registration's or an assertion's authenticator data. */
export const backupFlags = (info: {
  credentialDeviceType: CredentialDeviceType;
  credentialBackedUp: boolean;
}): BackupFlags => ({
  eligible: info.credentialDeviceType === "multiDevice",
  state: info.credentialBackedUp,
});

/** The columns a registration writes. */
export const backupColumns = (flags: BackupFlags) => ({
  backupEligible: flags.eligible,
  backupState: flags.state,
});

export function backupStateOf(key: Pick<SecurityKeyRow, "backupEligible" | "backupState">): BackupState {
  if (key.backupEligible === null || key.backupState === null) return "unknown";
  if (!key.backupEligible) return "device-bound";
  return key.backupState ? "synced" : "not-synced";
}

/**
 * WebAuthn L3 §7.2 (comparing an assertion's BE and BS with the credential record's): BE is fixed when the
 * credential is made (§6.1.3), so an assertion whose BE differs from the stored one is not from the authenticator
 * that registered the key, or is malformed: refused as any failed ceremony. A key whose BE is unknown (null) takes
 * the assertion's.
 */
export function checkBackupEligibility(key: SecurityKeyRow, asserted: BackupFlags): void {
  if (key.backupEligible !== null && key.backupEligible !== asserted.eligible) {
    throw ceremonyFailed("the backup eligibility (BE) differs from the registration's");
  }
}

/** Whether an assertion's flags differ from the stored ones (BS moved, or the key's flags were unknown). */
export const backupMoved = (key: SecurityKeyRow, asserted: BackupFlags): boolean =>
  key.backupEligible !== asserted.eligible || key.backupState !== asserted.state;
