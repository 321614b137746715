import { and, eq, ne } from "drizzle-orm";
import { refreshTokens, sessions } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { sha256Hex } from "../../lib/crypto";
import { locatorOf, refreshLifetimeMs, UUID_SHAPE } from "./sessions";
import { revokeFamily, revokeFamilyOfToken, revokeLegacyFamily } from "./token-families";

/**
 * Sign-out. A session ends when its row goes: every refresh reads the row after its family rotated, so no token of a
 * deleted session refreshes again. The family is revoked too, so its tokens also read as revoked.
 */

/**
 * Sessions without a locator (from before families) rotate in their `RefreshSession` object after a D1 lookup; a
 * rotation whose lookup ran just before the session was deleted may still reach the object, so the object is revoked
 * too. Such a rotation has just written `last_used_at`, so only sessions used within this window need the call, and
 * at most `MAX_OBJECT_REVOCATIONS`.
 */
const IN_FLIGHT_WINDOW_MS = 60_000;
const MAX_OBJECT_REVOCATIONS = 50;

async function revokeInFlight(
  deps: Deps,
  removed: { id: string; lastUsedAt: number; locator: string | null }[],
): Promise<void> {
  const since = deps.now() - IN_FLIGHT_WINDOW_MS;
  const forgetAt = deps.now() + refreshLifetimeMs(deps);
  const recent = removed
    .filter((session) => session.locator === null && session.lastUsedAt >= since)
    .sort((a, b) => b.lastUsedAt - a.lastUsedAt)
    .slice(0, MAX_OBJECT_REVOCATIONS);
  await Promise.all(recent.map((session) => revokeLegacyFamily(deps, session.id, forgetAt)));
}

/** Sign-out of one session: its row goes (so no token of it refreshes again), and its family is revoked. */
export async function revokeSession(deps: Deps, sessionId: string): Promise<void> {
  const removed = await deps.db
    .delete(sessions)
    .where(eq(sessions.id, sessionId))
    .returning({ locator: sessions.locator })
    .get();
  if (removed?.locator) await revokeFamily(deps, removed.locator, sessionId);
  else await revokeLegacyFamily(deps, sessionId, deps.now() + refreshLifetimeMs(deps));
}

/** Sign-out of the one session a refresh token belongs to; an unknown token is not an error (contract §3.3). */
export async function revokeByRefreshToken(deps: Deps, refreshToken: string): Promise<void> {
  if (!UUID_SHAPE.test(refreshToken)) return;
  const family = await revokeFamilyOfToken(deps, locatorOf(refreshToken), refreshToken);
  if (family) {
    await deps.db.delete(sessions).where(eq(sessions.id, family));
    return;
  }
  const row = await deps.db
    .select({ sessionId: refreshTokens.sessionId })
    .from(refreshTokens)
    .where(eq(refreshTokens.tokenHash, await sha256Hex(refreshToken)))
    .get();
  if (row) await revokeSession(deps, row.sessionId);
}

/**
 * A replica's lag must not let a token of a session just deleted refresh (a refresh may read a nearby replica,
 * refresh.ts): the families of the deleted sessions are revoked in their objects too, the most recently used first,
 * up to this many (each is one object call). Sessions beyond it end when the replicas have the deletion, within
 * their replication lag; a user with more live sessions than this is an automated client.
 */
const MAX_FAMILY_REVOCATIONS = 200;

/**
 * Revokes every session of a user, except `keepSessionId` (the caller's own, after a password change). One D1
 * statement ends them all, however many there are: from then on no token of theirs refreshes.
 */
export async function revokeAllSessions(deps: Deps, userId: string, keepSessionId?: string): Promise<void> {
  const ofUser = eq(sessions.userId, userId);
  const removed = await deps.db
    .delete(sessions)
    .where(keepSessionId ? and(ofUser, ne(sessions.id, keepSessionId)) : ofUser)
    .returning({ id: sessions.id, lastUsedAt: sessions.lastUsedAt, locator: sessions.locator })
    .all();
  const families = removed
    .filter((session) => session.locator !== null)
    .sort((a, b) => b.lastUsedAt - a.lastUsedAt)
    .slice(0, MAX_FAMILY_REVOCATIONS);
  await Promise.all([
    revokeInFlight(deps, removed),
    ...families.map((session) => revokeFamily(deps, session.locator!, session.id)),
  ]);
}
