import type { UserRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { renderTemplate, type TemplateName } from "../mail/templates";
import { toWireUser } from "./users";

/**
 * One of contract §8's mails to a user, in their language (the template's default locale when theirs is missing):
 * what every mailed link and code goes through, the mailed links' (./links/ticket-mail.ts) and the email second
 * factor's code (./second-step.ts).
 */

function templateValues(deps: Deps, user: UserRow, values: Record<string, string>): Record<string, string> {
  const { config } = deps;
  return {
    displayName: user.displayName,
    email: user.email ?? "",
    newEmail: user.newEmail ?? "",
    locale: user.locale,
    serverUrl: config.urls.server,
    clientUrl: config.urls.client,
    ...values,
  };
}

export async function sendTemplate(
  deps: Deps,
  user: UserRow,
  to: string,
  name: TemplateName,
  values: Record<string, string>,
  faceData?: Record<string, unknown>,
) {
  const { config } = deps;
  const message = renderTemplate(
    config.mail.templates,
    name,
    user.locale,
    config.locales.default,
    templateValues(deps, user, values),
  );
  // What the mail is, for the app's SEND_EMAIL hook, which writes its own (contract move-in §5.3).
  const about = {
    template: name,
    locale: user.locale,
    ...(values.link ? { link: values.link } : {}),
    ...(values.code ? { code: values.code } : {}),
    user: toWireUser(user),
    ...(faceData ? { faceData } : {}),
  };
  await deps.mailer.send({ to, ...message, about });
}
