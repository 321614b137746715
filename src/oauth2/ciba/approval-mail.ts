import { mailTime, toWireUser } from "../../auth";
import { CATALOGUES, chooseLanguage, LANGUAGES } from "../../browser/text";
import type { DeviceAuthorizationRow, OAuth2ClientRow, UserRow } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { renderTemplate } from "../../mail/templates";
import { approvalLink } from "./approvals";

/**
 * Mails the user a CIBA request (template "ciba-request") in their language (`users.locale`): who asks, the client's
 * binding message quoted, and the link to the approval page, which needs them signed in and their click. A user
 * without an address is asked in the account center only. A failed send rejects (the caller forgets the request).
 */
export async function sendApprovalMail(
  deps: Deps,
  user: UserRow,
  client: OAuth2ClientRow,
  row: DeviceAuthorizationRow,
): Promise<void> {
  if (!user.email) return;
  const { config } = deps;
  const words = CATALOGUES[chooseLanguage([user.locale, config.locales.default], LANGUAGES)].ciba;
  const link = approvalLink(deps, row);
  const message = renderTemplate(config.mail.templates, "ciba-request", user.locale, config.locales.default, {
    displayName: user.displayName || user.email,
    email: user.email,
    locale: user.locale,
    serverUrl: config.urls.server,
    clientUrl: config.urls.client,
    clientName: client.clientName,
    bindingMessage: row.bindingMessage ? `“${row.bindingMessage}”` : words.noMessage,
    time: mailTime(row.expiresAt),
    link,
  });
  // What the mail is, for the app's SEND_EMAIL hook, which writes its own (contract move-in §5.3).
  const about = { template: "ciba-request", locale: user.locale, link, user: toWireUser(user) };
  await deps.mailer.send({ to: user.email, ...message, about });
}
