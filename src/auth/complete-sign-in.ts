import { idForUser } from "../db/routed-ids";
import { mfaTickets } from "../db/schema";
import type { Deps } from "../http/deps";
import { sha256Hex } from "../lib/crypto";

const TICKET_LIFETIME_MS = 5 * 60 * 1000;

/**
 * The second step's tickets (contract §2, issue 47): `<prefix><uuid>`, the prefix naming the factor the step asks for
 * (`mfaTotp:` for `POST /signin/mfa/totp`, `mfaSms:`, `mfaEmail:`, `mfaWebauthn:` for their own routes, mfa/). The
 * uuid carries the user's slot, so the second step finds the user's shard from the ticket alone. The stored hash is
 * of the whole ticket, prefix included: a ticket cannot be taken to another factor's route by changing its prefix.
 */
export const SECOND_STEP_TICKET_PREFIXES = {
  totp: "mfaTotp:",
  phone: "mfaSms:",
  email: "mfaEmail:",
  webauthn: "mfaWebauthn:",
} as const;

export type SecondStepKind = keyof typeof SECOND_STEP_TICKET_PREFIXES;

/** The TOTP step's prefix (Nhost's only one). */
export const MFA_TICKET_PREFIX = SECOND_STEP_TICKET_PREFIXES.totp;

/** Which step a ticket is for, and its id, by its prefix; null for anything else. */
export function secondStepTicketKind(ticket: string): { kind: SecondStepKind; id: string } | null {
  for (const [kind, prefix] of Object.entries(SECOND_STEP_TICKET_PREFIXES) as [SecondStepKind, string][]) {
    if (ticket.startsWith(prefix)) return { kind, id: ticket.slice(prefix.length) };
  }
  return null;
}

/** The first step of a sign-in with a second factor: no session yet, a ticket for the factor's `/signin/mfa/…`. */
export async function issueMfaTicket(
  deps: Deps,
  userId: string,
  kind: SecondStepKind = "totp",
): Promise<string> {
  const ticket = `${SECOND_STEP_TICKET_PREFIXES[kind]}${idForUser(userId)}`;
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
