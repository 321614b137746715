import { and, eq, gt, inArray, ne, sql } from "drizzle-orm";
import { refreshTokens, sessions, type UserRow, users } from "../db/schema";
import type { RotateOutcome } from "../durable/refresh-session";
import { AppError } from "../errors";
import { decrypt, encrypt, randomUuid, sha256Hex } from "../lib/crypto";
import { type HasuraClaims, signAccessToken } from "../lib/jwt";
import type { Deps } from "./deps";
import { hasuraClaims, toWireUser, type WireUser } from "./users";

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
  const refreshToken = randomUuid();
  const expiresAt = tokenExpiry(deps, now);
  await deps.db.batch([
    deps.db
      .insert(sessions)
      .values({ id: sessionId, userId: user.id, createdAt: now, lastUsedAt: now, expiresAt, userAgent }),
    deps.db.insert(refreshTokens).values({ tokenHash: await sha256Hex(refreshToken), sessionId, expiresAt }),
    deps.db.update(users).set({ lastSeen: now }).where(eq(users.id, user.id)),
  ]);
  return buildSession(deps, user, sessionId, refreshToken, now, extraClaims);
}

function familyStub(deps: Deps, sessionId: string) {
  return deps.env.REFRESH_SESSIONS.get(deps.env.REFRESH_SESSIONS.idFromName(sessionId));
}

/**
 * `POST /token` (contract §5.2). The Durable Object of the session decides atomically whether the presented token
 * is current (rotate), a duplicate inside the grace window (same successor), or a replay (revoke the family).
 *
 * One D1 round trip does the lookup and the writes: every statement of the batch finds the session through the
 * presented token's hash, so the candidate successor is indexed (and resolves the moment it is handed out) without
 * first reading the session id. A candidate that is not used is deleted afterwards.
 */
export async function refreshSession(
  deps: Deps,
  refreshToken: string,
  /** `0` when a token must be spent exactly once, with no duplicate allowed (the OAuth2 page's magic-link landing). */
  graceMs = deps.config.AUTH_REFRESH_TOKEN_REUSE_INTERVAL * 1000,
): Promise<Session> {
  if (!UUID_SHAPE.test(refreshToken)) throw new AppError("invalid-refresh-token");
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
      throw new AppError(
        "invalid-refresh-token",
        undefined,
        result.outcome === "replayed" ? `refresh token replayed; session ${sessionId} revoked` : undefined,
      );
  }
}

/**
 * A rotation whose D1 lookup ran just before its session was deleted may still reach the session's Durable Object;
 * revoking the object refuses it. Such a refresh has just written `last_used_at`, so only sessions used within this
 * window need the call, and at most `MAX_OBJECT_REVOCATIONS` of them: a user with thousands of sessions must not
 * push the request past the platform's subrequest limit (it did: one call per session, then a 500).
 */
const IN_FLIGHT_WINDOW_MS = 60_000;
const MAX_OBJECT_REVOCATIONS = 50;

async function revokeInFlight(deps: Deps, removed: { id: string; lastUsedAt: number }[]): Promise<void> {
  const since = deps.now() - IN_FLIGHT_WINDOW_MS;
  const forgetAt = tokenExpiry(deps, deps.now());
  const recent = removed
    .filter((session) => session.lastUsedAt >= since)
    .sort((a, b) => b.lastUsedAt - a.lastUsedAt)
    .slice(0, MAX_OBJECT_REVOCATIONS);
  await Promise.all(recent.map((session) => familyStub(deps, session.id).revoke(forgetAt)));
}

/**
 * Sign-out of one session: its object first (an in-flight rotation cannot win), then its rows (the refresh-token
 * index goes with them by cascade).
 */
export async function revokeSession(deps: Deps, sessionId: string): Promise<void> {
  await familyStub(deps, sessionId).revoke(tokenExpiry(deps, deps.now()));
  await deps.db.delete(sessions).where(eq(sessions.id, sessionId));
}

/** Sign-out of the one session a refresh token belongs to; an unknown token is not an error (contract §3.3). */
export async function revokeByRefreshToken(deps: Deps, refreshToken: string): Promise<void> {
  if (!UUID_SHAPE.test(refreshToken)) return;
  const row = await deps.db
    .select({ sessionId: refreshTokens.sessionId })
    .from(refreshTokens)
    .where(eq(refreshTokens.tokenHash, await sha256Hex(refreshToken)))
    .get();
  if (row) await revokeSession(deps, row.sessionId);
}

/**
 * Revokes every session of a user, except `keepSessionId` (the caller's own, after a password change). One D1
 * statement ends them all, however many there are: from then on no token of theirs resolves. The objects of the
 * sessions in use right now are revoked as well (see `revokeInFlight`).
 */
export async function revokeAllSessions(deps: Deps, userId: string, keepSessionId?: string): Promise<void> {
  const ofUser = eq(sessions.userId, userId);
  const removed = await deps.db
    .delete(sessions)
    .where(keepSessionId ? and(ofUser, ne(sessions.id, keepSessionId)) : ofUser)
    .returning({ id: sessions.id, lastUsedAt: sessions.lastUsedAt })
    .all();
  await revokeInFlight(deps, removed);
}
