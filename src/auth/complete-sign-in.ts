import { idForUser } from "../db/routed-ids";
import { mfaTickets, type UserRow } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { sha256Hex } from "../lib/crypto";
import { createSession, type Session } from "./new-sessions";
import type { ActiveMembership } from "./org-membership";
import { refuseMethodUnderSso } from "./sso-enforcement";

const TICKET_LIFETIME_MS = 5 * 60 * 1000;
/**
 * The second step's ticket (contract §2): `mfaTotp:<uuid>`, for `POST /signin/mfa/totp` (mfa/totp-sign-in.ts). The
 * uuid carries the user's slot, so the second step finds the user's shard from the ticket alone.
 */
export const MFA_TICKET_PREFIX = "mfaTotp:";

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
export async function completeSignIn(
  deps: Deps,
  user: UserRow,
  userAgent?: string,
  /** The organization the session starts in (an enterprise sign-in: the connection's org, its membership made). */
  org?: ActiveMembership,
  /** How the user signed in, when the flow says so (an enterprise sign-in); else the path's. */
  method?: string,
): Promise<SignInResult> {
  if (user.activeMfaType === "totp") {
    if (user.totpSecret === null) throw new AppError("mfa-reset-required");
    // Enforced SSO refuses the first factor before its ticket (createSession checks the sessions made at once).
    await refuseMethodUnderSso(deps, user.email, method);
    return { session: null, mfa: { ticket: await issueMfaTicket(deps, user.id) } };
  }
  return { session: await createSession(deps, user, userAgent, undefined, org, method), mfa: null };
}

/** The first step of a sign-in with TOTP active: no session yet, a ticket for `POST /signin/mfa/totp`. */
export async function issueMfaTicket(deps: Deps, userId: string): Promise<string> {
  const ticket = `${MFA_TICKET_PREFIX}${idForUser(userId)}`;
  await deps.shards
    .ofUser(userId)
    .insert(mfaTickets)
    .values({
      ticketHash: await sha256Hex(ticket),
      userId,
      expiresAt: deps.now() + TICKET_LIFETIME_MS,
    });
  return ticket;
}
