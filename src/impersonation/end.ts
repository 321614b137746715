import { and, desc, eq, isNull, lte } from "drizzle-orm";
import { findUserById, revokeSession } from "../auth";
import { type ImpersonationRow, impersonations } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { sendEndedMail } from "./ended-mail";

/**
 * An impersonation's end (contract operators.md §1): ended early by an operator, or its time up (the every-minute
 * sweep). Either way the row is marked ended by one conditional statement, so exactly one of the two ends it, audits
 * it and mails the user; the session's row and refresh family go, so nothing of it refreshes again (its access tokens
 * already end no later than its end).
 */

export type EndedHow = "ended" | "expired";

/** Marks the impersonation ended once; its row as it was, or undefined when it had ended already (or never was). */
async function markEnded(deps: Deps, id: string, how: EndedHow, now: number) {
  return deps.db
    .update(impersonations)
    .set({ endedAt: now, endedHow: how, landingHash: null, landingSealed: null })
    .where(and(eq(impersonations.id, id), isNull(impersonations.endedAt)))
    .returning()
    .get();
}

async function finish(deps: Deps, row: ImpersonationRow, how: EndedHow, now: number, by?: string) {
  await revokeSession(deps, row.id);
  deps.audit({
    type: "admin.impersonation.end",
    userId: row.userId,
    detail: {
      sessionId: row.id,
      actor: row.actor,
      caller: row.caller,
      reason: row.reason,
      how,
      ...(by ? { endedBy: by } : {}),
      startedAt: new Date(row.startedAt).toISOString(),
      endedAt: new Date(Math.min(now, row.endsAt)).toISOString(),
    },
  });
  if (deps.config.impersonation.notifyUser) {
    const user = await findUserById(deps.shards, row.userId);
    if (user) await sendEndedMail(deps, user, row, Math.min(now, row.endsAt));
  }
}

/** `DELETE /admin/impersonations/{sessionId}`: 404 for none, 400 for one that ended already. Its user's id. */
export async function endImpersonation(deps: Deps, sessionId: string, by?: string): Promise<string> {
  const now = deps.now();
  const row = await markEnded(deps, sessionId, "ended", now);
  if (!row) {
    const known = await deps.db
      .select({ id: impersonations.id })
      .from(impersonations)
      .where(eq(impersonations.id, sessionId))
      .get();
    if (!known) throw new AppError("not-found", "no impersonation with this session id");
    throw new AppError("invalid-request", "this impersonation has ended already");
  }
  await finish(deps, row, "ended", now, by);
  return row.userId;
}

/** How many ended impersonations one sweep handles; the next minute takes the rest. */
const SWEEP_BATCH = 50;

/** The every-minute sweep: impersonations whose time is up are ended (audited, mailed). */
export async function sweepImpersonations(deps: Deps, now: number): Promise<void> {
  const due = await deps.db
    .select({ id: impersonations.id })
    .from(impersonations)
    .where(and(isNull(impersonations.endedAt), lte(impersonations.endsAt, now)))
    .limit(SWEEP_BATCH)
    .all();
  for (const { id } of due) {
    const row = await markEnded(deps, id, "expired", now);
    if (row) await finish(deps, row, "expired", now);
  }
}

/** A user's impersonations, newest first (the console's user page): running ones first to end. */
export async function impersonationsOf(deps: Deps, userId: string, limit = 20) {
  return deps.db
    .select()
    .from(impersonations)
    .where(eq(impersonations.userId, userId))
    .orderBy(desc(impersonations.startedAt))
    .limit(limit)
    .all();
}
