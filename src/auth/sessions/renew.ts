import { eq } from "drizzle-orm";
import { firstNearby } from "../../db/compiled-read";
import { sessions } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { type Rotation, rotateInFamily } from "../../token-families";
import { rotateLegacySessionToken } from "../../token-families/legacy";
import { liveSessionUser } from "../hot-queries";
import {
  buildSession,
  locatorOf,
  newSessionToken,
  refreshLifetimeMs,
  type Session,
  UUID_SHAPE,
} from "../new-sessions";
import { shardOfSession } from "../session-shard";
import { claimsBeforeRotation } from "../token-claims";

/**
 * `POST /token` (contract §5.2): a session renewed by its refresh token. The token's family rotates in its
 * `SessionFamilies` object (src/token-families/); then
 * one primary-key read of the session and its user: the session must still exist (sign-out everywhere, a password
 * change, an admin revocation delete it), the user must be enabled, and the new access token carries the user's
 * current claims. No D1 write: the session's last-used time and sliding expiry are written after the answer when the
 * object says they are due.
 *
 * The read may be served by a nearby replica (docs/decisions.md, "Reads near the user"): at least as fresh as the
 * family's bookmark (the user's own writes through this session), and from the primary when the replica has not got
 * the session yet (a sign-in a moment ago). Revocations reach the family's object, so a replica's lag never lets a
 * signed-out token refresh.
 */
export async function renewSession(
  deps: Deps,
  refreshToken: string,
  /** `0` when a token must be spent exactly once, with no duplicate allowed (the OAuth2 page's magic-link landing). */
  graceMs = deps.config.AUTH_REFRESH_TOKEN_REUSE_INTERVAL * 1000,
): Promise<Session> {
  if (!UUID_SHAPE.test(refreshToken)) throw new AppError("invalid-refresh-token");
  const now = deps.now();
  const locator = locatorOf(refreshToken);
  const lifetimeMs = refreshLifetimeMs(deps);
  // Claims that can refuse the token are computed before the token is spent (src/auth/token-claims.ts).
  const early = await claimsBeforeRotation(deps, locator, refreshToken, now);
  let rotation = await rotateInFamily(deps, locator, {
    presented: refreshToken,
    successor: newSessionToken(locator),
    lifetimeMs,
    graceMs,
  });
  // legacy drawer: a token from before locators is moved onto a family (docs/operations.md, its removal).
  if (rotation.outcome === "unknown")
    rotation = await rotateLegacySessionToken(deps, refreshToken, {
      successorFor: newSessionToken,
      locatorOf,
      lifetimeMs,
      graceMs,
    });
  if (rotation.outcome === "unknown") throw new AppError("invalid-refresh-token");
  if (rotation.outcome !== "rotated" && rotation.outcome !== "grace")
    return endReplayedSession(deps, rotation);
  // The family is the session's id, which names the shard of the session and its user.
  const db = await shardOfSession(deps.shards, rotation.family);
  const user =
    db &&
    (await firstNearby(db.$client, liveSessionUser, { sessionId: rotation.family, now }, rotation.bookmark));
  if (!db || !user) throw new AppError("invalid-refresh-token");
  if (user.disabled) throw new AppError("disabled-user");
  if (rotation.outcome === "rotated" && rotation.touch) {
    const expiresAt = now + lifetimeMs;
    deps.background(
      db.update(sessions).set({ lastUsedAt: now, expiresAt }).where(eq(sessions.id, rotation.family)).run(),
    );
  }
  const custom = early?.family === rotation.family ? early.custom : undefined;
  return buildSession(deps, user, rotation.family, rotation.token, now, undefined, custom);
}

/** A replay ends the session (its row goes, so no token of it refreshes); a family revoked before just refuses. */
async function endReplayedSession(
  deps: Deps,
  rotation: Extract<Rotation, { outcome: "replayed" | "revoked" }>,
): Promise<never> {
  const db = await shardOfSession(deps.shards, rotation.family);
  const ended = await db
    ?.delete(sessions)
    .where(eq(sessions.id, rotation.family))
    .returning({ userId: sessions.userId })
    .get();
  if (rotation.outcome === "replayed") {
    deps.audit({ type: "refresh.replay", userId: ended?.userId, detail: { sessionId: rotation.family } });
  }
  throw new AppError(
    "invalid-refresh-token",
    undefined,
    rotation.outcome === "replayed"
      ? `refresh token replayed; session ${rotation.family} revoked`
      : undefined,
  );
}
