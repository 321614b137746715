import { and, desc, eq, inArray, ne } from "drizzle-orm";
import type { Db } from "../db/client";
import { sessions } from "../db/schema";
import type { Deps } from "../http/deps";
import { revokeFamily } from "../token-families";
import { revokeLegacySessions } from "../token-families/legacy";

/**
 * At most `AUTH_MAX_SESSIONS_PER_USER` sessions per user (200 by default): a sign-in past it ends the user's least
 * recently used session. A person has a
 * handful; more is an automated client signing in on each run and never signing out, or someone with a stolen
 * password filling the user's shard with rows. The cap is what lets "sign out everywhere" end every session in its
 * family's object at once (one object call each, within a request's subrequests), which the service binding's
 * `live` check asks (src/platform/liveness.ts): without it, sessions past the ones revoked there stayed live to that
 * check until their access tokens expired. It is also why the user's session list is complete.
 */
const EVICTED_PER_SIGN_IN = 50;

export type EndedSession = { id: string; lastUsedAt: number; locator: string | null };

/**
 * The statement that ends the user's sessions beyond the cap, least recently used first, never `newSessionId` (the
 * one being written): run in the sign-in's batch, it costs no round trip, and it deletes nothing for almost everyone.
 */
export function sessionsBeyondCap(db: Db, userId: string, newSessionId: string, cap: number) {
  const oldest = db
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(eq(sessions.userId, userId), ne(sessions.id, newSessionId)))
    .orderBy(desc(sessions.lastUsedAt), desc(sessions.id))
    // Bounded: each ended session costs an object call after the answer. Past the cap by more (sessions imported from
    // another system), each sign-in trims this many more.
    .limit(EVICTED_PER_SIGN_IN)
    .offset(cap - 1);
  return db
    .delete(sessions)
    .where(inArray(sessions.id, oldest))
    .returning({ id: sessions.id, lastUsedAt: sessions.lastUsedAt, locator: sessions.locator });
}

/**
 * The families of sessions whose rows were deleted end in their objects too (the rows' deletion already stops their
 * refreshes on the primary; the objects answer before a lagging replica, and the `live` check asks only them).
 */
export async function endFamiliesOf(deps: Deps, ended: EndedSession[], lifetimeMs: number): Promise<void> {
  await Promise.all([
    revokeLegacySessions(deps, ended, lifetimeMs), // legacy drawer: sessions from before locators
    ...ended.flatMap((session) => (session.locator ? [revokeFamily(deps, session.locator, session.id)] : [])),
  ]);
}
