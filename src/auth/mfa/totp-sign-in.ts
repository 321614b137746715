import { and, eq, gt, lt, sql } from "drizzle-orm";
import { shardOfRouted } from "../../db/routed-ids";
import type { UserRow } from "../../db/schema";
import { mfaTickets } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { sha256Hex } from "../../lib/crypto";
import { MFA_TICKET_PREFIX } from "../complete-sign-in";
import type { Session } from "../new-sessions";
import { checkOneTimeCode } from "../one-time-codes";
import { phoneFactorScope, secondStepOf } from "../second-step";
import { type SignInScope, startSession } from "../sign-in";
import { findUserById } from "../users";
import { acceptPhoneCode, acceptSecondFactor } from "./second-factor";

/** Tries per ticket, counted before the code is checked, so parallel guesses cannot exceed it. */
export const MAX_MFA_ATTEMPTS = 5;

/**
 * The user a second-step ticket stands for while it can still be used (not expired, tries left), or null; nothing is
 * spent. The hosted pages' TOTP step reads it to speak the user's own language (`locale`), as the account center does.
 */
export async function mfaTicketUser(deps: Deps, ticket: string): Promise<UserRow | null> {
  if (!ticket.startsWith(MFA_TICKET_PREFIX)) return null;
  const db = shardOfRouted(deps.shards, ticket.slice(MFA_TICKET_PREFIX.length));
  if (!db) return null;
  const row = await db
    .select({ userId: mfaTickets.userId })
    .from(mfaTickets)
    .where(
      and(
        eq(mfaTickets.ticketHash, await sha256Hex(ticket)),
        gt(mfaTickets.expiresAt, deps.now()),
        lt(mfaTickets.attempts, MAX_MFA_ATTEMPTS),
      ),
    )
    .get();
  return row ? ((await findUserById(deps.shards, row.userId)) ?? null) : null;
}

/**
 * verifySignInMfaTotp: one attempt is taken from the ticket by a conditional UPDATE (so the cap holds under
 * parallel requests), the code is checked (a TOTP code, once, or a recovery code, once; for a user whose second
 * factor is a phone, the code texted at the first step), and on success the ticket is consumed by a DELETE …
 * RETURNING: of two requests racing with good codes, one gets the session.
 */
export async function verifySignInMfaTotp(
  scope: SignInScope,
  input: { ticket: string; otp: string },
): Promise<{ session: Session }> {
  const { deps } = scope;
  if (!input.ticket.startsWith(MFA_TICKET_PREFIX)) throw new AppError("invalid-ticket");
  // The ticket's id names the shard of the ticket and of its user (complete-sign-in.ts); any other id, none.
  const db = shardOfRouted(deps.shards, input.ticket.slice(MFA_TICKET_PREFIX.length));
  if (!db) throw new AppError("invalid-ticket");
  const ticketHash = await sha256Hex(input.ticket);
  const attempt = await db
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
  const user = await findUserById(deps.shards, attempt.userId);
  const step = user ? await secondStepOf(deps, user) : null;
  if (!user || (step?.kind !== "totp" && step?.kind !== "phone")) throw new AppError("invalid-ticket");
  const right =
    step.kind === "totp"
      ? await acceptSecondFactor(deps, user, input.otp)
      : // The user's factor is a phone: the code texted at the first step (sign-in/pipeline.ts), guarded and under
        // the lockout as the Supabase face's verify of it is.
        await acceptPhoneCode(
          deps,
          user,
          () => checkOneTimeCode(deps, phoneFactorScope(step.factorId), input.otp),
          true,
        );
  if (!right) throw new AppError("invalid-totp");
  const consumed = await db
    .delete(mfaTickets)
    .where(eq(mfaTickets.ticketHash, ticketHash))
    .returning({ userId: mfaTickets.userId })
    .get();
  if (!consumed) throw new AppError("invalid-ticket");
  if (user.disabled) throw new AppError("disabled-user");
  // Recorded as the factor it was (`mfa-sms`: aal2 on the Supabase face too), unless the route names its own.
  const method = step.kind === "phone" && scope.method === "mfa-totp" ? "mfa-sms" : undefined;
  return { session: (await startSession(scope, { user, method })).session };
}
