import type { Deps } from "../../http/deps";
import { renderTemplate } from "../../mail/templates";
import { mailTime } from "../devices";
import { findUserById, toWireUser } from "../users";

/**
 * Mails the user that an upgrade made a passkey for their account (template "passkey-upgrade", docs/passkeys.md), in
 * their language, with a link to the account center's passkeys, where it is removed: the key was made without a
 * gesture, so the person hears of it the way they hear of a new device.
 */
export async function sendUpgradeMail(deps: Deps, userId: string, at: number): Promise<void> {
  const user = await findUserById(deps.shards, userId);
  if (!user?.email) return;
  const { config } = deps;
  const link = config.urls.auth("/account#passkeys");
  const message = renderTemplate(
    config.mail.templates,
    "passkey-upgrade",
    user.locale,
    config.locales.default,
    {
      displayName: user.displayName || user.email,
      email: user.email,
      locale: user.locale,
      serverUrl: config.urls.server,
      clientUrl: config.urls.client,
      time: mailTime(at),
      link,
    },
  );
  // What the mail is, for the app's SEND_EMAIL hook, which writes its own (contract move-in §5.3).
  const about = { template: "passkey-upgrade", locale: user.locale, link, user: toWireUser(user) };
  await deps.mailer.send({ to: user.email, ...message, about });
}
