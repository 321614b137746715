import { and, eq, gt, lt, sql } from "drizzle-orm";
import { mfaTickets, type UserRow } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { randomUuid, sha256Hex } from "../../lib/crypto";
import { findUserById } from "../accounts/users";
import { createSession, type Session } from "../sessions/sessions";
import { acceptSecondFactor } from "./second-factor";

const TICKET_LIFETIME_MS = 5 * 60 * 1000;
/** Tries per ticket, counted before the code is checked, so parallel guesses cannot exceed it. */
export const MAX_MFA_ATTEMPTS = 5;
const PREFIX = "mfaTotp:";

/** What a sign-in answers (contract §2, SessionPayload with `mfa`). */
export interface SignInResult {
  session: Session | null;
  mfa: { ticket: string } | null;
}

/**
 * The end of every sign-in by one factor (a password, an email or SMS code, a mailed link's PKCE code): with TOTP
 * active the factor was only the first, and the answer is an `mfaTotp:` ticket instead of a session. It stays so
 * if AUTH_MFA_ENABLED is later switched off: a user's second factor is not dropped by a configuration change.
 */
export async function completeSignIn(deps: Deps, user: UserRow, userAgent?: string): Promise<SignInResult> {
  if (user.activeMfaType === "totp") {
    return { session: null, mfa: { ticket: await issueMfaTicket(deps, user.id) } };
  }
  return { session: await createSession(deps, user, userAgent), mfa: null };
}

/** The first step of a sign-in with TOTP active: no session yet, a ticket for `POST /signin/mfa/totp`. */
export async function issueMfaTicket(deps: Deps, userId: string): Promise<string> {
  const ticket = `${PREFIX}${randomUuid()}`;
  await deps.db.insert(mfaTickets).values({
    ticketHash: await sha256Hex(ticket),
    userId,
    expiresAt: deps.now() + TICKET_LIFETIME_MS,
  });
  return ticket;
}

/**
 * verifySignInMfaTotp: one attempt is taken from the ticket by a conditional UPDATE (so the cap holds under
 * parallel requests), the code is checked (a TOTP code, once, or a recovery code, once), and on success the ticket is
 * consumed by a DELETE … RETURNING: of two requests racing with good codes, one gets the session.
 */
export async function verifySignInMfaTotp(
  deps: Deps,
  input: { ticket: string; otp: string },
  userAgent?: string,
): Promise<{ session: Session }> {
  if (!input.ticket.startsWith(PREFIX)) throw new AppError("invalid-ticket");
  const ticketHash = await sha256Hex(input.ticket);
  const attempt = await deps.db
    .update(mfaTickets)
    .set({ attempts: sql`${mfaTickets.attempts} + 1` })
    .where(
      and(
        eq(mfaTickets.ticketHash, ticketHash),
        gt(mfaTickets.expiresAt, deps.now()),
        lt(mfaTickets.attempts, MAX_MFA_ATTEMPTS),
      ),
    )
    .returning({ userId: mfaTickets.userId })
    .get();
  if (!attempt) throw new AppError("invalid-ticket");
  const user = await findUserById(deps.db, attempt.userId);
  if (user?.activeMfaType !== "totp") throw new AppError("invalid-ticket");
  if (!(await acceptSecondFactor(deps, user, input.otp))) throw new AppError("invalid-totp");
  const consumed = await deps.db
    .delete(mfaTickets)
    .where(eq(mfaTickets.ticketHash, ticketHash))
    .returning({ userId: mfaTickets.userId })
    .get();
  if (!consumed) throw new AppError("invalid-ticket");
  if (user.disabled) throw new AppError("disabled-user");
  return { session: await createSession(deps, user, userAgent) };
}
