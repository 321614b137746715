import type { UserRow } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { sha256Hex } from "../../lib/crypto";
import type { TemplateName } from "../../mail/templates";
import type { LinkForm } from "../link-form";
import { sendTemplate } from "../template-mail";
import { issueMailedCode } from "./sent-codes";
import { issueTicket, TICKET_TYPES, type TicketType } from "./tickets";

export type { LinkForm };

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
  const code = form?.withCode
    ? await issueMailedCode(deps, to, type, user.id, await sha256Hex(ticket))
    : undefined;
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
