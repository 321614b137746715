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
