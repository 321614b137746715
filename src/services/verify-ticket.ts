import { AppError } from "../errors";
import type { Deps } from "./deps";
import { markEmailVerified } from "./email-verification";
import { createSession, type Session } from "./sessions";
import { consumeTicket, TICKET_TYPES } from "./tickets";

/**
 * `GET /verify` (contract §8): consumes the ticket, applies its effect and starts a session.
 * Returns the session and the `type` the redirect carries.
 */
export async function verifyTicket(
  deps: Deps,
  ticket: string,
  userAgent?: string,
): Promise<{ session: Session; type: string }> {
  const consumed = await consumeTicket(deps, ticket);
  if (!consumed) throw new AppError("invalid-ticket");
  // One effect per ticket type; each later ticket type (magic link, reset, email change) adds its case here.
  const user = await markEmailVerified(deps, consumed.userId);
  if (!user) throw new AppError("invalid-ticket");
  if (user.disabled) throw new AppError("disabled-user");
  const session = await createSession(deps, user, userAgent);
  return { session, type: TICKET_TYPES[consumed.type].redirectType };
}
