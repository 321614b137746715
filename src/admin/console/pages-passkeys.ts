import { html } from "hono/html";
import { type BackupState, backupStateOf } from "../../auth";
import type { AdminSecurityKey } from "../passkeys";
import { action, type Chrome, when } from "./pages";

/**
 * A user's passkeys and security keys on their console page (issue 47, docs/passkeys.md "For the operator"): what the
 * operator needs to answer "I never added this passkey" or "why is my sign-in not phishing-resistant?": when each
 * was added and last used, whether a passkey upgrade made it (without a gesture, right after a password, link or code
 * sign-in: the user was mailed), whether its sign-ins count as `phr` yet, what it speaks; and a button that takes one
 * off (`admin.security-key.remove`, the admin API's `DELETE /admin/users/{id}/security-keys/{keyId}`). Its backup
 * state (WebAuthn's BE and BS flags, src/auth/webauthn/backup-state.ts) says whether losing the device loses the key.
 */

/** Where the transports a browser reports come from, in words (WebAuthn §5.8.4). */
const TRANSPORTS: Record<string, string> = {
  internal: "this device",
  hybrid: "a phone (hybrid)",
  usb: "USB",
  nfc: "NFC",
  ble: "Bluetooth",
  "smart-card": "smart card",
};

const transportsOf = (key: AdminSecurityKey) =>
  key.transports.length === 0 ? "–" : key.transports.map((t) => TRANSPORTS[t] ?? t).join(", ");

function madeBy(key: AdminSecurityKey) {
  return key.upgrade
    ? html`<span class="badge">automatic upgrade</span><br><small class="muted">made after a sign-in, no gesture; the user was mailed</small>`
    : html`added by the user`;
}

function resistance(key: AdminSecurityKey) {
  if (!key.upgrade) return html`<span class="badge on">yes</span>`;
  return key.userVerifiedAt
    ? html`<span class="badge on">yes</span><br><small class="muted">verified use since ${when(key.userVerifiedAt)}</small>`
    : html`<span class="badge off">not yet</span><br><small class="muted">never used with user verification</small>`;
}

/** The backup state in words: a synced passkey survives a lost device; a device-bound key does not. */
const BACKUP: Record<BackupState, ReturnType<typeof html>> = {
  synced: html`<span class="badge on">synced</span>`,
  "not-synced": html`can sync<br><small class="muted">not backed up yet</small>`,
  "device-bound": html`this device only`,
  unknown: html`<span class="muted">unknown</span><br><small class="muted">added before backup states were kept; known at its next use</small>`,
};

function row(chrome: Chrome, userPath: string, key: AdminSecurityKey) {
  // Cards on a phone (390 px): the key id is long and unbreakable, each cell goes under its label.
  return html`<tr><td data-label="Passkey">${key.nickname ?? html`<span class="muted">unnamed</span>`}<br><small class="muted"><code>${key.id}</code></small></td>
<td data-label="Added" class="tight">${when(key.createdAt)}</td><td data-label="Last used" class="tight">${
    key.lastUsedAt ? when(key.lastUsedAt) : html`<span class="muted">not since added</span>`
  }</td><td data-label="Made">${madeBy(key)}</td><td data-label="Phishing-resistant (phr)">${resistance(key)}</td>
<td data-label="Transports" class="tight">${transportsOf(key)}</td><td data-label="Backup">${BACKUP[backupStateOf(key)]}</td><td class="tight">${action(
    chrome,
    `${userPath}/security-keys/${encodeURIComponent(key.id)}/remove`,
    "Remove",
    "danger",
  )}</td></tr>`;
}

export function passkeysSection(chrome: Chrome, userPath: string, keys: AdminSecurityKey[]) {
  return html`<h2 id="passkeys">Passkeys and security keys (${keys.length})</h2>
${
  keys.length === 0
    ? html`<p class="muted">None: this user signs in without a passkey.</p>`
    : html`<table class="cards"><thead><tr><th>Passkey</th><th class="tight">Added (UTC)</th><th class="tight">Last used</th><th>Made</th><th>Phishing-resistant (phr)</th><th class="tight">Transports</th><th>Backup</th><th class="tight"></th></tr></thead><tbody>${keys.map(
        (key) => row(chrome, userPath, key),
      )}</tbody></table>
<p class="muted"><small>Removing a key ends none of the user's sessions (they are listed below: revoke them if the key was not theirs); when it was their last key, a passkey second step falls back to their other factor.</small></p>`
}`;
}
