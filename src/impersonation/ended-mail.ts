import { toWireUser } from "../auth";
import type { ImpersonationRow, UserRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { renderTemplate } from "../mail/templates";

/** "2026-07-14 09:32 UTC": the same in every language (as the new-device mail writes it). */
const mailTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;

/**
 * The mail after an impersonation ended (template `impersonation-ended`, `AUTH_IMPERSONATION_NOTIFY_USER`), in the
 * user's language: who acted, when, and why, with a link to their session list. Sent after the end, not at the
 * start: support often acts while the user waits on a call, and the mail is the record the user keeps.
 */
export async function sendEndedMail(deps: Deps, user: UserRow, row: ImpersonationRow, end: number) {
  if (!user.email) return;
  const { config } = deps;
  const link = config.urls.auth("/account#sessions");
  const message = renderTemplate(
    config.mail.templates,
    "impersonation-ended",
    user.locale,
    config.locales.default,
    {
      displayName: user.displayName || user.email,
      email: user.email,
      locale: user.locale,
      serverUrl: config.urls.server,
      clientUrl: config.urls.client,
      actor: row.actor,
      reason: row.reason,
      start: mailTime(row.startedAt),
      end: mailTime(end),
      link,
    },
  );
  const about = { template: "impersonation-ended", locale: user.locale, link, user: toWireUser(user) };
  await deps.mailer.send({ to: user.email, ...message, about });
}
