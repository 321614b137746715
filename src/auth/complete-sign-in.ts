import { idForUser } from "../db/routed-ids";
import { mfaTickets } from "../db/schema";
import type { Deps } from "../http/deps";
import { sha256Hex } from "../lib/crypto";

const TICKET_LIFETIME_MS = 5 * 60 * 1000;
/**
 * The second step's ticket (contract §2): `mfaTotp:<uuid>`, for `POST /signin/mfa/totp` (mfa/totp-sign-in.ts). The
 * uuid carries the user's slot, so the second step finds the user's shard from the ticket alone. A sign-in by one
 * factor gets one instead of a session when the user has TOTP active (sign-in/pipeline.ts, `mfaGate`).
 */
export const MFA_TICKET_PREFIX = "mfaTotp:";

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
