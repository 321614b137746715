import type { UserRow } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { renderTemplate, type TemplateName } from "../../mail/templates";
import type { LinkForm } from "../link-form";
import { toWireUser } from "../users";
import { issueMailedCode } from "./sent-codes";
import { issueTicket, TICKET_TYPES, type TicketType } from "./tickets";

export type { LinkForm };

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

async function sendTemplate(
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

/** Where a mailed link leads: the app's `redirectTo`, and the app's PKCE challenge when it sent one. */
export interface LinkTarget {
  redirectTo: string;
  codeChallenge?: string;
  /** The face's form of the link (none: the Nhost API's). */
  form?: LinkForm;
}

/** A ticket just issued, its link in the form the caller asked for, and the code beside it when asked. */
export interface MintedLink {
  ticket: string;
  link: string;
  code?: string;
}

/**
 * Issues a ticket of `type` (replacing the user's previous one of that type), and its link: the Nhost API's
 * `{AUTH_SERVER_URL}/verify?ticket=…&type=…&redirectTo=…` (contract §8), or the face's form. `to` is where it will go
 * (the code's object is per address).
 */
export async function mintTicketLink(
  deps: Deps,
  user: UserRow,
  type: TicketType,
  target: LinkTarget,
  to: string,
): Promise<MintedLink> {
  const ticket = await issueTicket(deps, user.id, type, target.codeChallenge);
  const { form, redirectTo } = target;
  const link = new URL(deps.config.urls.auth("/verify"));
  link.searchParams.set("ticket", ticket);
  link.searchParams.set("type", TICKET_TYPES[type].redirectType);
  link.searchParams.set("redirectTo", redirectTo);
  const code = form?.withCode ? await issueMailedCode(deps, to, type, user.id) : undefined;
  return {
    ticket,
    link: form ? form.link(ticket, type, redirectTo) : link.toString(),
    ...(code ? { code } : {}),
  };
}

/**
 * Mails a new ticket's link (`mintTicketLink`). `to` defaults to the user's email; the email change confirmation
 * goes to the new address. `template` replaces the ticket type's own (an operator's invitation is a magic link's
 * ticket, worded as an invitation).
 */
export async function sendTicketMail(
  deps: Deps,
  user: UserRow,
  type: TicketType,
  target: LinkTarget,
  to: string | null = user.email,
  template: TemplateName = TICKET_TYPES[type].template,
): Promise<void> {
  if (!to) return;
  const { ticket, link, code } = await mintTicketLink(deps, user, type, target, to);
  const { redirectTo } = target;
  await sendTemplate(
    deps,
    user,
    to,
    template,
    { link, ticket, redirectTo, ...(code ? { code } : {}) },
    target.form?.hookData?.({ ticket, code, type, redirectTo }),
  );
}

/** Mails a one-time code: a sign-in's (`signin-otp`), or a re-authentication's (`reauthentication`). */
export async function sendCodeMail(
  deps: Deps,
  user: UserRow,
  code: string,
  template: "signin-otp" | "reauthentication" = "signin-otp",
): Promise<void> {
  if (user.email) await sendTemplate(deps, user, user.email, template, { code });
}
