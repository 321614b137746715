import { CATALOGUES, chooseLanguage, LANGUAGES } from "../../browser/text";
import type { UserRow } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { renderTemplate } from "../../mail/templates";
import { toWireUser } from "../users";
import type { LockoutFactor } from "./sign-in-lockout";

/** Where the mailed link lands: a page of this service (unlock-routes.ts), in the user's language. */
export const UNLOCK_PATH = "/unlock";

/** "15 minutes", "2 hours", in the language the mail is written in. */
function durationIn(language: (typeof LANGUAGES)[number], minutes: number): string {
  const words = CATALOGUES[language].lockout.duration;
  if (minutes < 60) return words.minutes(minutes);
  const hours = Math.round(minutes / 60);
  return hours === 1 ? words.hour : words.hours(hours);
}

/**
 * The notice of a lock (template `account-locked`, catalogue `lockout.mail`, in the user's locale like every mail of
 * contract §8), sent once per lock: only the attempt that started it sends it. Its link unlocks that factor after
 * proving the mailbox; `ticket` is `<userId>.<secret>`, whose secret only the object holds, hashed.
 */
export async function sendLockoutMail(
  deps: Deps,
  user: UserRow,
  factor: LockoutFactor,
  minutes: number,
  ticket: string,
): Promise<void> {
  if (!user.email) return;
  const { config } = deps;
  const language = chooseLanguage([user.locale, config.locales.default], LANGUAGES);
  const link = new URL(config.urls.auth(UNLOCK_PATH));
  link.searchParams.set("ticket", ticket);
  const message = renderTemplate(
    config.mail.templates,
    "account-locked",
    user.locale,
    config.locales.default,
    {
      displayName: user.displayName,
      email: user.email,
      locale: user.locale,
      serverUrl: config.urls.server,
      clientUrl: config.urls.client,
      link: link.toString(),
      method: CATALOGUES[language].lockout.methods[factor],
      duration: durationIn(language, minutes),
      minutes: String(minutes),
    },
  );
  // What the mail is, for the app's SEND_EMAIL hook, which writes its own (contract move-in §5.3).
  const about = {
    template: "account-locked",
    locale: user.locale,
    link: link.toString(),
    user: toWireUser(user),
  };
  await deps.mailer.send({ to: user.email, ...message, about });
}
