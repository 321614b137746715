import { CATALOGUES, chooseLanguage, LANGUAGES } from "../../browser/text";
import type { UserRow } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { renderTemplate } from "../../mail/templates";
import { toWireUser } from "../users";
import type { DeviceName } from "./device-name";

/** What the mail says about the sign-in; the words around it come from the user's language. */
export interface SignInSeen {
  name: DeviceName;
  /** "City, region, country" from `request.cf`, or null. */
  place: string | null;
  /** ms */
  at: number;
  /** The sign-in's risk level, when a gate assessed it (`Deps.visitor.riskLevel`, src/risk/). */
  riskLevel: string | null;
}

/** "2026-07-14 09:32 UTC": the same in every language, and unambiguous wherever the reader is. */
export const mailTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;

const riskSentence = (sentences: Record<string, string>, level: string | null) =>
  level !== null && Object.hasOwn(sentences, level) ? sentences[level]! : "";

/**
 * Mails the user that their account was signed in to from a new device (template "new-device", contract §13), in
 * their language (`users.locale`), with a link to the account center's session list, where that session is ended.
 */
export async function sendNewDeviceMail(deps: Deps, user: UserRow, seen: SignInSeen): Promise<void> {
  if (!user.email) return;
  const { config } = deps;
  const words = CATALOGUES[chooseLanguage([user.locale, config.locales.default], LANGUAGES)].devices;
  const browser = seen.name.browser ?? words.unknownBrowser;
  const link = config.urls.auth("/account#sessions");
  const message = renderTemplate(config.mail.templates, "new-device", user.locale, config.locales.default, {
    displayName: user.displayName || user.email,
    email: user.email,
    locale: user.locale,
    serverUrl: config.urls.server,
    clientUrl: config.urls.client,
    device: seen.name.system ? words.device(browser, seen.name.system) : browser,
    place: seen.place ?? words.unknownPlace,
    time: mailTime(seen.at),
    risk: riskSentence(words.risk, seen.riskLevel),
    link,
  });
  // What the mail is, for the app's SEND_EMAIL hook, which writes its own (contract move-in §5.3).
  const about = { template: "new-device", locale: user.locale, link, user: toWireUser(user) };
  await deps.mailer.send({ to: user.email, ...message, about });
}
