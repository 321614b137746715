import type { UserRow } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { type LinkRequest, linkTarget, recordEmailChange } from "./email-flows";
import { type MintedLink, mintTicketLink, sendTicketMail } from "./ticket-mail";
import type { TicketType } from "./tickets";

/**
 * Links an operator sends for a user it names (the Supabase face's admin `inviteUserByEmail` and `generateLink`): the
 * same tickets, codes and effects as the flows' own mails, so a link an operator hands out is spent, checked and
 * replaced exactly as a mailed one. Only the service role reaches them.
 */

/** An invitation: the magic link's ticket (following it proves the address and signs in), worded as an invitation. */
export async function sendInvitation(deps: Deps, user: UserRow, request: LinkRequest): Promise<void> {
  await sendTicketMail(
    deps,
    user,
    "passwordlessEmail",
    linkTarget(deps, request),
    user.email,
    "user-invitation",
  );
}

/** A ticket's link and code for the user's address, answered to the operator instead of mailed. */
export async function mintLink(
  deps: Deps,
  user: UserRow,
  type: TicketType,
  request: LinkRequest,
): Promise<MintedLink> {
  if (!user.email) throw new AppError("invalid-request", "the user has no email address");
  return mintTicketLink(deps, user, type, linkTarget(deps, request), user.email);
}

/** An email change recorded for the user, and the link and code that confirm it (for the new address). */
export async function mintEmailChangeLink(
  deps: Deps,
  userId: string,
  newEmail: string,
  request: LinkRequest,
): Promise<MintedLink> {
  const target = linkTarget(deps, request);
  const user = await recordEmailChange(deps, userId, newEmail);
  return mintTicketLink(deps, user, "emailConfirmChange", target, user.newEmail ?? newEmail);
}
