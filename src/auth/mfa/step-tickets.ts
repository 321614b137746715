import { and, eq, gt, lt, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { shardOfRouted } from "../../db/routed-ids";
import { mfaTickets, type UserRow } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { sha256Hex } from "../../lib/crypto";
import { type PutBack, putBackWith } from "../../lib/put-back";
import { type SecondStepKind, secondStepTicketKind } from "../complete-sign-in";
import { findUserById } from "../users";

/** Tries per ticket, counted before the code is checked, so parallel guesses cannot exceed it. */
export const MAX_MFA_ATTEMPTS = 5;

/**
 * A second-step ticket's row (`mfa_tickets`, complete-sign-in.ts): found by the hash of the whole ticket in the shard
 * its id names, while it can still be used (not expired, tries left). Every step's route takes an attempt from it
 * before looking at the proof, and consumes it after (`consumeTicket`): of two right proofs racing, one wins.
 */
export interface TakenTicket {
  kind: SecondStepKind;
  user: UserRow;
  db: Db;
  ticketHash: string;
}

function located(ticket: string, kinds: readonly SecondStepKind[]) {
  const named = secondStepTicketKind(ticket);
  if (!named || !kinds.includes(named.kind)) return null;
  return { kind: named.kind, id: named.id };
}

const live = (deps: Deps, ticketHash: string) =>
  and(
    eq(mfaTickets.ticketHash, ticketHash),
    gt(mfaTickets.expiresAt, deps.now()),
    lt(mfaTickets.attempts, MAX_MFA_ATTEMPTS),
  );

/** The user a live ticket of one of `kinds` stands for, or null; nothing is spent. */
export async function ticketUser(
  deps: Deps,
  ticket: string,
  kinds: readonly SecondStepKind[],
): Promise<{ kind: SecondStepKind; user: UserRow } | null> {
  const named = located(ticket, kinds);
  const db = named && shardOfRouted(deps.shards, named.id);
  if (!named || !db) return null;
  const row = await db
    .select({ userId: mfaTickets.userId })
    .from(mfaTickets)
    .where(live(deps, await sha256Hex(ticket)))
    .get();
  const user = row ? await findUserById(deps.shards, row.userId) : undefined;
  return user ? { kind: named.kind, user } : null;
}

/**
 * One attempt taken from a live ticket of one of `kinds` by a conditional UPDATE (so the cap holds under parallel
 * requests); 401 `invalid-ticket` for anything else: unknown, expired, used, out of tries, another step's ticket.
 */
export async function takeTicketAttempt(
  deps: Deps,
  ticket: string,
  kinds: readonly SecondStepKind[],
): Promise<TakenTicket> {
  const named = located(ticket, kinds);
  // The ticket's id names the shard of the ticket and of its user (complete-sign-in.ts); any other id, none.
  const db = named && shardOfRouted(deps.shards, named.id);
  if (!named || !db) throw new AppError("invalid-ticket");
  const ticketHash = await sha256Hex(ticket);
  const attempt = await db
    .update(mfaTickets)
    .set({ attempts: sql`${mfaTickets.attempts} + 1` })
    .where(live(deps, ticketHash))
    .returning({ userId: mfaTickets.userId })
    .get();
  const user = attempt ? await findUserById(deps.shards, attempt.userId) : undefined;
  if (!user) throw new AppError("invalid-ticket");
  return { kind: named.kind, user, db, ticketHash };
}

/**
 * The ticket consumed by the statement that deletes it: of two requests that got this far, one gets the session. The
 * answer puts it back as it was: the caller runs the session's writes in `onFaultPutBack`, so a fault there leaves the
 * person their ticket (and the second step to answer again) instead of sending them back to their password.
 */
export async function consumeTicket(taken: TakenTicket): Promise<PutBack> {
  const consumed = await taken.db
    .delete(mfaTickets)
    .where(eq(mfaTickets.ticketHash, taken.ticketHash))
    .returning()
    .get();
  if (!consumed) throw new AppError("invalid-ticket");
  if (taken.user.disabled) throw new AppError("disabled-user");
  return {
    putBack: putBackWith("second-step ticket", () =>
      taken.db.insert(mfaTickets).values(consumed).onConflictDoNothing().run(),
    ),
  };
}
