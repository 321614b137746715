import type { Deps } from "../../http/deps";
import { issueOneTimeCode } from "../one-time-codes";
import { TICKET_TYPES, type TicketType } from "./tickets";

// The codes themselves are the core's (../one-time-codes.ts), so the sign-in pipeline texts them too.
export { checkOneTimeCode, issueOneTimeCode, redeemOneTimeCode, restoreOneTimeCode } from "../one-time-codes";

const HOUR = 3600 * 1000;

/**
 * The code object of a link's mail that carries a code too (mailed-codes.ts): one per address mailed to and kind of
 * ticket. Not one per address: anyone may have a sign-up verification mailed (`resend`), and its code replaced the
 * sign-in code the owner had just asked for, so the owner typed the verification's code into the sign-in form and
 * confirmed a stranger's sign-up, password and all (pre-hijacking, src/auth/credential-reset.ts).
 */
export const mailedCodeScope = (address: string, type: TicketType) =>
  `mailed-code:${type}:${address.toLowerCase()}`;

/** What a mailed code is tagged with: the one ticket it redeems (its hash, as the ticket's row keeps it). */
export const mailedCodeTag = (type: TicketType, userId: string, ticketHash: string) =>
  `${type}:${userId}:${ticketHash}`;

/**
 * A code for the ticket just issued to `userId`, tagged with that ticket, replacing the previous code mailed to `to`.
 * The tag names the ticket itself, not its type: a ticket of the same type mailed later (to another address, or by a
 * route whose mail carries no code) replaces the row, and the old address's code must not redeem the new ticket.
 */
export async function issueMailedCode(
  deps: Deps,
  to: string,
  type: TicketType,
  userId: string,
  ticketHash: string,
): Promise<string> {
  // No longer than GoTrue's codes live (an hour): the 30-day sign-up link need not bring a 30-day code.
  const lifetime = Math.min(TICKET_TYPES[type].lifetimeMs, HOUR);
  return issueOneTimeCode(deps, mailedCodeScope(to, type), lifetime, mailedCodeTag(type, userId, ticketHash));
}
