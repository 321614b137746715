import { inArray, isNull, lte, sql } from "drizzle-orm";
import { orgInvitations, orgMembers, orgSessionHints } from "../db/schema";
import { slotOfUser } from "../db/shards";
import type { Deps } from "../http/deps";

/**
 * The daily sweep (home database): expired invitations go; memberships from before `user_slot` get their slot; old
 * session hints go.
 */
export async function sweepOrgs(deps: Pick<Deps, "shards">, now: number): Promise<void> {
  await sweepInvitations(deps, now);
  await fillMemberSlots(deps);
  await forgetOldOrgHints(deps, now);
}

/** Expired invitations: never listed nor accepted, then gone. */
export async function sweepInvitations({ shards }: Pick<Deps, "shards">, now: number): Promise<void> {
  await shards.home.delete(orgInvitations).where(lte(orgInvitations.expiresAt, now)).run();
}

/** Users whose memberships one statement fills (one bound JSON object: D1 binds at most 100 values). */
const USERS_A_PAGE = 500;
/** Pages a sweep fills at most: two statements each, well inside an invocation's 1,000. */
const PAGES_A_SWEEP = 40;

/**
 * Memberships written before `org_members.user_slot` existed (migration 0045) get their user's slot, which SQLite
 * cannot compute (a SHA-256 of the id): read the users still without, compute in the Worker, write back in one
 * statement a page. Until then such a member's org switch from another database reads the membership after its
 * session's row (two waves), and fills its own row (src/auth/sessions/session-org.ts): nothing waits for the sweep.
 * Returns how many users it filled.
 */
export async function fillMemberSlots({ shards }: Pick<Deps, "shards">): Promise<number> {
  const db = shards.home;
  let filled = 0;
  for (let page = 0; page < PAGES_A_SWEEP; page++) {
    const users = await db
      .selectDistinct({ userId: orgMembers.userId })
      .from(orgMembers)
      .where(isNull(orgMembers.userSlot))
      .limit(USERS_A_PAGE)
      .all();
    if (!users.length) break;
    const slots = JSON.stringify(Object.fromEntries(users.map(({ userId }) => [userId, slotOfUser(userId)])));
    await db
      .update(orgMembers)
      .set({ userSlot: sql`(SELECT value FROM json_each(${slots}) WHERE key = ${orgMembers.userId})` })
      .where(
        sql`${orgMembers.userSlot} IS NULL AND ${orgMembers.userId} IN (SELECT key FROM json_each(${slots}))`,
      )
      .run();
    filled += users.length;
    if (users.length < USERS_A_PAGE) break;
  }
  return filled;
}

/**
 * How long a session's org hint (`org_session_hints`) is kept after it was written: the default refresh token
 * lifetime. Nothing says when a session kept in another database has ended, so hints go by age; one still in use
 * costs its session one refresh in two waves, which writes it again.
 */
export const HINT_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;
/** Hints one statement removes (an index range on `written_at`), and statements a sweep makes at most. */
const HINTS_A_PAGE = 5_000;
const HINT_PAGES_A_SWEEP = 40;

/** Removes the hints written more than `HINT_MAX_AGE_MS` ago, a page a statement. Returns how many went. */
export async function forgetOldOrgHints({ shards }: Pick<Deps, "shards">, now: number): Promise<number> {
  const db = shards.home;
  let removed = 0;
  for (let page = 0; page < HINT_PAGES_A_SWEEP; page++) {
    const old = db
      .select({ sessionId: orgSessionHints.sessionId })
      .from(orgSessionHints)
      .where(lte(orgSessionHints.writtenAt, now - HINT_MAX_AGE_MS))
      .limit(HINTS_A_PAGE);
    const { meta } = await db.delete(orgSessionHints).where(inArray(orgSessionHints.sessionId, old)).run();
    removed += meta.changes;
    if (meta.changes < HINTS_A_PAGE) break;
  }
  return removed;
}
