import type { Deps } from "../../http/deps";
import { mailTime } from "../devices";
import { sendTemplate } from "../template-mail";
import { findUserById } from "../users";

/**
 * Mails the user that an upgrade made a passkey for their account (template "passkey-upgrade", docs/passkeys.md), in
 * their language, with a link to the account center's passkeys, where it is removed: the key was made without a
 * gesture, so the person hears of it the way they hear of a new device.
 */
export async function sendUpgradeMail(deps: Deps, userId: string, at: number): Promise<void> {
  const user = await findUserById(deps.shards, userId);
  if (!user?.email) return;
  await sendTemplate(deps, user, user.email, "passkey-upgrade", {
    displayName: user.displayName || user.email,
    time: mailTime(at),
    link: deps.config.urls.auth("/account#passkeys"),
  });
}

/**
 * The upgrade's mail after the answer (docs/decisions.md, "Issue 47: the passkeys console…"): a notice of something
 * done, as the new-device mail is, so a transport down never undoes or fails the registration; the failure is logged
 * under its own name for the operator (the key's `security-key.added` event, `upgrade: true`, is in the audit).
 */
export function mailUpgradeAfterAnswer(deps: Deps, userId: string, at: number): void {
  // Logged by the request's own `background` (src/http/context.ts), which keeps the request's id for the line.
  deps.background(sendUpgradeMail(deps, userId, at), "passkey-upgrade mail");
}
