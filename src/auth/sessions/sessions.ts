import { and, eq, gt, inArray, ne, sql } from "drizzle-orm";
import { isSignUpPath, methodOf } from "../../audit/events";
import { refreshTokens, sessions, type UserRow, users } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { decrypt, encrypt, randomUuid, sha256Hex } from "../../lib/crypto";
import { type HasuraClaims, signAccessToken } from "../../lib/jwt";
import { hasuraClaims, toWireUser, type WireUser } from "../accounts/users";
import { hotQueries } from "./hot-queries";
import type { RotateOutcome } from "./refresh-session";

/** The Session resource of contract §2. */
export interface Session {
  accessToken: string;
  accessTokenExpiresIn: number;
  refreshToken: string;
  refreshTokenId: string;
  user: WireUser;
}

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function tokenExpiry(deps: Deps, now: number): number {
  return now + deps.config.AUTH_REFRESH_TOKEN_EXPIRES_IN * 1000;
}

/**
 * Refresh tokens keep the contract's UUID shape (§5.2). Their first six hex digits are the session's locator, the
 * name of the `SessionFamilies` object its family lives in, so a refresh needs no lookup to find it; the other 98
 * random bits are the secret. Sessions share an object only when their random locators collide, which the object
 * handles (it keys families by session).
 */
const newLocator = () => randomUuid().slice(0, 6);
const newRefreshToken = (locator: string) => `${locator}${randomUuid().slice(6)}`;
const locatorOf = (refreshToken: string) => refreshToken.slice(0, 6);

/** How stale a session's `last_used_at` and sliding `expires_at` in D1 may get: one write an hour, not one a refresh. */
const TOUCH_EVERY_MS = 3_600_000;

function familiesOf(deps: Deps, locator: string) {
  return deps.env.SESSION_FAMILIES.get(deps.env.SESSION_FAMILIES.idFromName(`families:${locator}`));
}

async function buildSession(
  deps: Deps,
  user: UserRow,
  sessionId: string,
  refreshToken: string,
  now: number,
  extraClaims?: HasuraClaims,
): Promise<Session> {
  const claims = hasuraClaims(user, deps.config, extraClaims);
  const accessToken = await signAccessToken(deps.config, user.id, claims, now, sessionId);
  return {
    accessToken,
    accessTokenExpiresIn: deps.config.AUTH_ACCESS_TOKEN_EXPIRES_IN,
    refreshToken,
    refreshTokenId: sessionId,
    user: toWireUser(user),
  };
}

/**
 * Starts a new session (token family) for a user who has just authenticated. `extraClaims` go into this first
 * access token only (the elevated claim): a refresh issues plain tokens.
 */
export async function createSession(
  deps: Deps,
  user: UserRow,
  userAgent?: string,
  extraClaims?: HasuraClaims,
): Promise<Session> {
  const now = deps.now();
  const sessionId = randomUuid();
  const locator = newLocator();
  const refreshToken = newRefreshToken(locator);
  const expiresAt = tokenExpiry(deps, now);
  await Promise.all([
    deps.db.batch([
      deps.db.insert(sessions).values({
        id: sessionId,
        userId: user.id,
        createdAt: now,
        lastUsedAt: now,
        expiresAt,
        userAgent,
        locator,
      }),
      deps.db.update(users).set({ lastSeen: now }).where(eq(users.id, user.id)),
    ]),
    familiesOf(deps, locator).start(sessionId, await sha256Hex(refreshToken), now, expiresAt),
  ]);
  if (extraClaims?.["x-hasura-auth-elevated"]) {
    deps.audit({ type: "elevation", userId: user.id, detail: { method: methodOf(deps.path) } });
  } else if (!isSignUpPath(deps.path)) {
    deps.audit({
      type: "signin.success",
      userId: user.id,
      detail: { method: methodOf(deps.path) ?? "other", sessionId },
    });
  }
  return buildSession(deps, user, sessionId, refreshToken, now, extraClaims);
}

function familyStub(deps: Deps, sessionId: string) {
  return deps.env.REFRESH_SESSIONS.get(deps.env.REFRESH_SESSIONS.idFromName(sessionId));
}

/**
 * `POST /token` (contract §5.2). The token's locator names its `SessionFamilies` object, which decides atomically
 * whether the presented token is current (rotate), a duplicate inside the grace window (the same successor), or an
 * older one (a replay: the family is revoked). Then one primary-key read of the session and its user: the session
 * must still exist (sign-out everywhere, a password change, an admin revocation delete it), the user must be enabled,
 * and the new access token carries the user's current claims. No D1 write: the session's last-used time and sliding
 * expiry are written after the answer, at most once an hour (`TOUCH_EVERY_MS`).
 */
export async function refreshSession(
  deps: Deps,
  refreshToken: string,
  /** `0` when a token must be spent exactly once, with no duplicate allowed (the OAuth2 page's magic-link landing). */
  graceMs = deps.config.AUTH_REFRESH_TOKEN_REUSE_INTERVAL * 1000,
): Promise<Session> {
  if (!UUID_SHAPE.test(refreshToken)) throw new AppError("invalid-refresh-token");
  const { config, db } = deps;
  const now = deps.now();
  const locator = locatorOf(refreshToken);
  const candidate = newRefreshToken(locator);
  const [presentedHash, candidateHash, candidateSealed] = await Promise.all([
    sha256Hex(refreshToken),
    sha256Hex(candidate),
    encrypt(config.AUTH_ENCRYPTION_KEY!, candidate),
  ]);
  const expiresAt = tokenExpiry(deps, now);
  const result = await familiesOf(deps, locator).rotate({
    presentedHash,
    candidateHash,
    candidateSealed,
    now,
    graceMs,
    expiresAt,
    touchEveryMs: TOUCH_EVERY_MS,
  });
  switch (result.outcome) {
    case "unknown":
      return refreshLegacySession(deps, refreshToken, graceMs);
    case "replayed":
    case "revoked": {
      const ended = await db
        .delete(sessions)
        .where(eq(sessions.id, result.family))
        .returning({ userId: sessions.userId })
        .get();
      if (result.outcome === "replayed") {
        deps.audit({ type: "refresh.replay", userId: ended?.userId, detail: { sessionId: result.family } });
      }
      throw new AppError(
        "invalid-refresh-token",
        undefined,
        result.outcome === "replayed"
          ? `refresh token replayed; session ${result.family} revoked`
          : undefined,
      );
    }
  }
  const found = await hotQueries(db).liveSessionUser.get({ sessionId: result.family, now });
  if (!found) throw new AppError("invalid-refresh-token");
  if (found.user.disabled) throw new AppError("disabled-user");
  if (result.outcome === "grace") {
    const successor = await decrypt(config.AUTH_ENCRYPTION_KEY!, result.successorSealed);
    return buildSession(deps, found.user, result.family, successor, now);
  }
  if (result.touch) {
    deps.background(
      db.update(sessions).set({ lastUsedAt: now, expiresAt }).where(eq(sessions.id, result.family)).run(),
    );
  }
  return buildSession(deps, found.user, result.family, candidate, now);
}

/**
 * Tokens issued before sessions had a locator (read-only fallback; removable once the last of them expired,
 * `AUTH_REFRESH_TOKEN_EXPIRES_IN` after the upgrade): the D1 index finds the session, and its `RefreshSession`
 * object decides atomically whether the presented token
 * is current (rotate), a duplicate inside the grace window (same successor), or a replay (revoke the family).
 *
 * One D1 round trip does the lookup and the writes: every statement of the batch finds the session through the
 * presented token's hash, so the candidate successor is indexed (and resolves the moment it is handed out) without
 * first reading the session id. A candidate that is not used is deleted afterwards.
 */
async function refreshLegacySession(deps: Deps, refreshToken: string, graceMs: number): Promise<Session> {
  const { db, config } = deps;
  const now = deps.now();
  const [presentedHash, candidate] = [await sha256Hex(refreshToken), randomUuid()];
  const candidateHash = await sha256Hex(candidate);
  const expiresAt = tokenExpiry(deps, now);
  const live = and(eq(refreshTokens.tokenHash, presentedHash), gt(refreshTokens.expiresAt, now));
  const sessionOfPresented = db.select({ id: refreshTokens.sessionId }).from(refreshTokens).where(live);

  const [[found], candidateSealed] = await Promise.all([
    db.batch([
      db
        .select({ sessionId: refreshTokens.sessionId, user: users })
        .from(refreshTokens)
        .innerJoin(sessions, eq(sessions.id, refreshTokens.sessionId))
        .innerJoin(users, eq(users.id, sessions.userId))
        .where(live),
      db.insert(refreshTokens).select(
        db
          .select({
            tokenHash: sql<string>`${candidateHash}`.as("token_hash"),
            sessionId: refreshTokens.sessionId,
            expiresAt: sql<number>`${expiresAt}`.as("expires_at"),
          })
          .from(refreshTokens)
          .where(live),
      ),
      db.update(sessions).set({ lastUsedAt: now, expiresAt }).where(inArray(sessions.id, sessionOfPresented)),
    ]),
    encrypt(config.AUTH_ENCRYPTION_KEY!, candidate),
  ]);
  const family = found[0];
  if (!family) throw new AppError("invalid-refresh-token");
  const { sessionId, user } = family;
  const dropCandidate = () =>
    deps.background(db.delete(refreshTokens).where(eq(refreshTokens.tokenHash, candidateHash)).run());
  if (user.disabled) {
    dropCandidate();
    throw new AppError("disabled-user");
  }

  const result: RotateOutcome = await familyStub(deps, sessionId).rotate({
    presentedHash,
    candidateHash,
    candidateSealed,
    now,
    graceMs,
    expiresAt,
  });

  switch (result.outcome) {
    case "rotated":
      return buildSession(deps, user, sessionId, candidate, now);
    case "grace": {
      dropCandidate();
      const successor = await decrypt(deps.config.AUTH_ENCRYPTION_KEY!, result.successorSealed);
      return buildSession(deps, user, sessionId, successor, now);
    }
    case "replayed":
    case "revoked":
      await deps.db.delete(sessions).where(eq(sessions.id, sessionId));
      if (result.outcome === "replayed") {
        deps.audit({ type: "refresh.replay", userId: user.id, detail: { sessionId } });
      }
      throw new AppError(
        "invalid-refresh-token",
        undefined,
        result.outcome === "replayed" ? `refresh token replayed; session ${sessionId} revoked` : undefined,
      );
  }
}

/**
 * Legacy sessions (no locator): a rotation whose D1 lookup ran just before its session was deleted may still reach
 * the session's `RefreshSession` object; revoking the object refuses it. Such a refresh has just written
 * `last_used_at`, so only sessions used within this window need the call, and at most `MAX_OBJECT_REVOCATIONS`.
 * Sessions with a locator need none of this: every refresh reads the session row after its object rotated, so a
 * deleted session refreshes no more.
 */
const IN_FLIGHT_WINDOW_MS = 60_000;
const MAX_OBJECT_REVOCATIONS = 50;

async function revokeInFlight(
  deps: Deps,
  removed: { id: string; lastUsedAt: number; locator: string | null }[],
): Promise<void> {
  const since = deps.now() - IN_FLIGHT_WINDOW_MS;
  const forgetAt = tokenExpiry(deps, deps.now());
  const recent = removed
    .filter((session) => session.locator === null && session.lastUsedAt >= since)
    .sort((a, b) => b.lastUsedAt - a.lastUsedAt)
    .slice(0, MAX_OBJECT_REVOCATIONS);
  await Promise.all(recent.map((session) => familyStub(deps, session.id).revoke(forgetAt)));
}

/** Sign-out of one session: its row goes (so no token of it refreshes again), and its family is revoked. */
export async function revokeSession(deps: Deps, sessionId: string): Promise<void> {
  const removed = await deps.db
    .delete(sessions)
    .where(eq(sessions.id, sessionId))
    .returning({ locator: sessions.locator })
    .get();
  if (removed?.locator) await familiesOf(deps, removed.locator).revokeFamily(sessionId);
  else await familyStub(deps, sessionId).revoke(tokenExpiry(deps, deps.now()));
}

/** Sign-out of the one session a refresh token belongs to; an unknown token is not an error (contract §3.3). */
export async function revokeByRefreshToken(deps: Deps, refreshToken: string): Promise<void> {
  if (!UUID_SHAPE.test(refreshToken)) return;
  const hash = await sha256Hex(refreshToken);
  const family = await familiesOf(deps, locatorOf(refreshToken)).revokeByToken(hash);
  if (family) {
    await deps.db.delete(sessions).where(eq(sessions.id, family));
    return;
  }
  const row = await deps.db
    .select({ sessionId: refreshTokens.sessionId })
    .from(refreshTokens)
    .where(eq(refreshTokens.tokenHash, hash))
    .get();
  if (row) await revokeSession(deps, row.sessionId);
}

/**
 * Revokes every session of a user, except `keepSessionId` (the caller's own, after a password change). One D1
 * statement ends them all, however many there are: from then on no token of theirs refreshes (see
 * `revokeInFlight` for the sessions from before locators).
 */
export async function revokeAllSessions(deps: Deps, userId: string, keepSessionId?: string): Promise<void> {
  const ofUser = eq(sessions.userId, userId);
  const removed = await deps.db
    .delete(sessions)
    .where(keepSessionId ? and(ofUser, ne(sessions.id, keepSessionId)) : ofUser)
    .returning({ id: sessions.id, lastUsedAt: sessions.lastUsedAt, locator: sessions.locator })
    .all();
  await revokeInFlight(deps, removed);
}
