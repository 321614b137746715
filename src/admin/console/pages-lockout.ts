import { html } from "hono/html";
import type { FactorLock } from "../../auth";
import { action, type Chrome, when } from "./pages";

/** How the console names each factor of the lockout. */
const FACTOR_NAMES: Record<FactorLock["factor"], string> = {
  password: "Password",
  "email-otp": "Email code",
  "sms-otp": "SMS code",
  totp: "TOTP code",
  "recovery-code": "Recovery code",
};

/**
 * The user's sign-in lockout on their console page (contract §13): which methods are locked and until when (UTC), and
 * the button that unlocks them all (src/admin/unlock.ts), which also forgets failures that locked nothing yet.
 */
export function lockoutSection(chrome: Chrome, userId: string, locks: FactorLock[]) {
  return html`<h2 id="lockout">Sign-in lockout</h2>
${
  locks.length === 0
    ? html`<p class="muted">No sign-in method is locked.</p>`
    : html`<ul>${locks.map(
        (lock) =>
          html`<li>${FACTOR_NAMES[lock.factor]} <span class="badge off">locked</span> until ${when(new Date(lock.lockedUntil).toISOString())} UTC</li>`,
      )}</ul>`
}
<div class="actions">${action(chrome, `/users/${userId}/unlock`, "Unlock sign-in")}</div>`;
}
