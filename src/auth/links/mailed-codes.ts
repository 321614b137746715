import { AppError } from "../../errors";
import { spentUnlessPutBack } from "../../lib/put-back";
import { beginAttempt } from "../lockout";
import type { SignInScope } from "../sign-in";
import { findUserByEmail } from "../users";
import { mailedCodeScope, redeemOneTimeCode } from "./sent-codes";
import { claimTicket, type TicketType } from "./tickets";
import { applyTicket, type VerifiedTicket } from "./verify-ticket";

/**
 * The six-digit code a link's mail carries beside the link when a face asks for it (GoTrue's mails carry both: an
 * app may link its own page, or ask for the code). The code is a second way to the same ticket, never a second
 * ticket: it is good only while the ticket is, and redeeming it consumes the ticket, so the link and the code are
 * one credential, spent once whichever is used. The code's object (a `OneTimeCode` per address and kind) holds its
 * HMAC, its 5-try cap and, as its tag, the ticket's type, user and hash: a code answers for the ticket of the mail it
 * was sent in and no other (issued by sent-codes.ts `issueMailedCode`). A newer ticket of the type replaces the row,
 * so the old code redeems nothing, even where the newer mail went to another address and left the old code standing.
 */

/**
 * The code mailed to `address`, for a ticket of one of the `accepted` types: the ticket's effect and session as
 * following its link would give (`applyTicket`, PKCE aside: whoever holds the code read the mail). Wrong, expired,
 * used, exhausted and other-type codes are all 400 `invalid-otp`; each try counts against the account's lockout
 * before the code is looked at, as the email sign-in code's does.
 */
export async function verifyMailedCode(
  scope: SignInScope,
  input: { address: string; code: string; accepted: readonly TicketType[] },
): Promise<VerifiedTicket> {
  const { deps } = scope;
  const address = input.address.toLowerCase();
  const user = await findUserByEmail(deps.shards, address);
  const attempt = await beginAttempt(deps, "email-otp", { user, identifier: `email:${address}` }, input.code);
  // The code of each kind the route takes (GoTrue's `email` takes a sign-up's and a magic link's), at once; a wrong
  // one costs a try at each. The account's lockout counts the attempt once (above).
  const tags = await Promise.all(
    input.accepted.map((type) => redeemOneTimeCode(deps, mailedCodeScope(address, type), input.code)),
  );
  const tag = tags.find((found) => found !== null) ?? null;
  // A code mailed before codes named their ticket has two parts, and redeems nothing (it lived an hour at most).
  const [type, userId, ticketHash] = tag?.split(":") ?? [];
  const fits =
    (input.accepted as readonly string[]).includes(type ?? "") &&
    userId !== undefined &&
    ticketHash !== undefined;
  // The ticket the code was mailed with, claimed (tickets.ts `claimTicket`): the link already followed, or a newer
  // ticket of the type in its place, leaves the code nothing to redeem.
  const claimed = fits
    ? await claimTicket(deps, deps.shards.ofUser(userId), { ticketHash, type: type as TicketType, userId })
    : null;
  if (!claimed) {
    await attempt.settle(false);
    throw new AppError("invalid-otp");
  }
  // A fault from here on (the lockout's settling included) puts the ticket back: the code is spent, but the link in
  // the same mail works again. An answer or a refusal deletes the claimed row after the answer.
  return spentUnlessPutBack(deps.background, "ticket", claimed, async () => {
    await attempt.settle(true);
    return applyTicket(scope, { userId: claimed.row.userId, type: type as TicketType, codeChallenge: null });
  });
}
