import { and, eq, isNotNull, sql } from "drizzle-orm";
import { isUniqueViolation } from "../db/errors";
import { type UserRow, users } from "../db/schema";
import { AppError } from "../errors";
import { issueAuthorizationCode } from "./authorization-codes";
import type { Deps } from "./deps";
import { createSession, type Session } from "./sessions";
import { consumeTicket, TICKET_TYPES, type TicketType } from "./tickets";
import { findUserById } from "./users";

type Effect = (deps: Deps, userId: string) => Promise<UserRow | undefined>;

/** Following a link proves the user reads that mailbox. */
const markEmailVerified: Effect = (deps, userId) =>
  deps.db
    .update(users)
    .set({ emailVerified: true, updatedAt: deps.now() })
    .where(eq(users.id, userId))
    .returning()
    .get();

/** The address changes only now, when the link sent to the new address is followed (contract §3.4). */
const confirmEmailChange: Effect = async (deps, userId) => {
  try {
    return await deps.db
      .update(users)
      .set({ email: sql`${users.newEmail}`, newEmail: null, emailVerified: true, updatedAt: deps.now() })
      .where(and(eq(users.id, userId), isNotNull(users.newEmail)))
      .returning()
      .get();
  } catch (error) {
    // Someone took the address between the request and the confirmation (unique index).
    if (isUniqueViolation(error)) throw new AppError("email-already-in-use");
    throw error;
  }
};

const EFFECTS: Record<TicketType, Effect> = {
  verifyEmail: markEmailVerified,
  passwordlessEmail: markEmailVerified,
  // The link signs the user in; the app then sets the new password with that session (POST /user/password).
  passwordReset: (deps, userId) => findUserById(deps.db, userId),
  emailConfirmChange: confirmEmailChange,
};

/** What a followed link yields: a session, or for a PKCE app a one-time code; and the `type` the redirect carries. */
export type VerifiedTicket = { type: string } & ({ session: Session } | { code: string });

/**
 * `GET /verify` (contract §8): consumes the ticket atomically, applies its effect and starts a session, or, when
 * the app asked with a PKCE challenge, issues a code that `POST /token/exchange` turns into the session.
 */
export async function verifyTicket(deps: Deps, ticket: string, userAgent?: string): Promise<VerifiedTicket> {
  const consumed = await consumeTicket(deps, ticket);
  if (!consumed) throw new AppError("invalid-ticket");
  const user = await EFFECTS[consumed.type](deps, consumed.userId);
  if (!user) throw new AppError("invalid-ticket");
  if (user.disabled) throw new AppError("disabled-user");
  const type = TICKET_TYPES[consumed.type].redirectType;
  if (consumed.codeChallenge) {
    return { code: await issueAuthorizationCode(deps, user.id, consumed.codeChallenge), type };
  }
  return { session: await createSession(deps, user, userAgent), type };
}
