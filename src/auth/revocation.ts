import { and, eq, ne } from "drizzle-orm";
import type { Db } from "../db/client";
import { sessions } from "../db/schema";
import type { Deps } from "../http/deps";
import { revokeFamily, revokeFamilyOfToken } from "../token-families";
import { legacySessionOfToken, revokeLegacySession } from "../token-families/legacy";
import { credentialsChanged } from "./credential-changes";
import { locatorOf, refreshLifetimeMs, UUID_SHAPE } from "./new-sessions";
import { endFamiliesOf } from "./session-cap";
import { shardOfSession } from "./session-shard";

/**
 * Sign-out. A session ends when its row goes: every refresh reads the row after its family rotated, so no token of a
 * deleted session refreshes again. The family is revoked too, so its tokens also read as revoked.
 */

/** Sign-out of one session: its row goes (so no token of it refreshes again), and its family is revoked. */
export async function revokeSession(deps: Deps, sessionId: string): Promise<void> {
  await revokeSessionIn(deps, await shardOfSession(deps.shards, sessionId), sessionId);
}

/** `revokeSession` in the shard that holds the session (undefined: no shard does; its object is revoked still). */
async function revokeSessionIn(deps: Deps, db: Db | undefined, sessionId: string): Promise<void> {
  const removed = await db
    ?.delete(sessions)
    .where(eq(sessions.id, sessionId))
    .returning({ locator: sessions.locator })
    .get();
  await endFamilyOf(deps, sessionId, removed?.locator);
}

/** A deleted session's refresh tokens end too: its family's object, or the legacy drawer's hashes (no locator). */
async function endFamilyOf(deps: Deps, sessionId: string, locator: string | null | undefined) {
  if (locator) await revokeFamily(deps, locator, sessionId);
  else await revokeLegacySession(deps, sessionId, refreshLifetimeMs(deps)); // legacy drawer
}

/**
 * Sign-out of one session of `userId` (the session list's "sign out that one", contract §13): the row goes only if
 * it is that user's, in one statement, so no one ends, or learns of, another user's session. False: no such session.
 */
export async function revokeSessionOfUser(deps: Deps, userId: string, sessionId: string): Promise<boolean> {
  const removed = await deps.shards
    .ofUser(userId)
    .delete(sessions)
    .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId)))
    .returning({ locator: sessions.locator })
    .get();
  if (!removed) return false;
  await endFamilyOf(deps, sessionId, removed.locator);
  return true;
}

/** Sign-out of the one session a refresh token belongs to; an unknown token is not an error (contract §3.3). */
export async function revokeByRefreshToken(deps: Deps, refreshToken: string): Promise<void> {
  if (!UUID_SHAPE.test(refreshToken)) return;
  const family = await revokeFamilyOfToken(deps, locatorOf(refreshToken), refreshToken);
  if (family) {
    await (await shardOfSession(deps.shards, family))?.delete(sessions).where(eq(sessions.id, family));
    return;
  }
  const legacy = await legacySessionOfToken(deps, refreshToken); // legacy drawer
  if (legacy) await revokeSessionIn(deps, legacy.db, legacy.sessionId);
}

/**
 * Revokes every session of a user, except `keepSessionId` (the caller's own, after a password change). One D1
 * statement ends them all, however many there are: from then on no token of theirs refreshes.
 */
export async function revokeAllSessions(deps: Deps, userId: string, keepSessionId?: string): Promise<void> {
  const ofUser = eq(sessions.userId, userId);
  const removed = await deps.shards
    .ofUser(userId)
    .delete(sessions)
    .where(keepSessionId ? and(ofUser, ne(sessions.id, keepSessionId)) : ofUser)
    .returning({ id: sessions.id, lastUsedAt: sessions.lastUsedAt, locator: sessions.locator })
    .all();
  await Promise.all([
    // Signing out everywhere is the owner's remedy for a stolen token: an old system's tokens end with it too.
    credentialsChanged(deps.shards.ofUser(userId), userId, deps.now()),
    // Every family in its object, at once: a replica's lag must not let a token of a deleted session refresh
    // (a refresh may read a nearby replica, sessions/renew.ts), and the service binding's `live` check asks only the
    // objects. There are at most AUTH_MAX_SESSIONS_PER_USER (session-cap.ts), one object call each.
    // Most recently used first, within a request's subrequests, for a user past the cap from before it existed.
    endFamiliesOf(
      deps,
      removed.sort((a, b) => b.lastUsedAt - a.lastUsedAt).slice(0, 500),
      refreshLifetimeMs(deps),
    ),
  ]);
}
