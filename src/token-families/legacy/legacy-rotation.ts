import { and, eq, gt, isNull } from "drizzle-orm";
import type { Db } from "../../db/client";
import { shardOfEntry } from "../../db/directory";
import { oauth2Grants, oauth2RefreshTokens, refreshTokens, sessions } from "../../db/schema";
import { eachShard } from "../../db/shards";
import type { Deps } from "../../http/deps";
import { decrypt, sha256Hex } from "../../lib/crypto";
import { newLocator, objectRequest, type Rotation, type RotationRequest, startFamily } from "../rotation";
import type { RotateOutcome } from "./refresh-session";

/**
 * Refresh tokens from before token families, all of them in this drawer: session tokens of sessions without a
 * locator (found through the `refresh_tokens` index) and OAuth2 refresh tokens of the form `ort_` + 43 characters
 * (found through `oauth2_refresh_tokens`). Each rotates once more in its `RefreshSession` object, and its successor is
 * a token of the new kind whose family starts here: every such token is either moved onto a family or expires. The
 * indexes are only read here; the import from Nhost (src/move-in/) writes session tokens known by Nhost's hash into
 * `refresh_tokens`, which take the same path. The OAuth2 half goes on the date docs/operations.md gives ("Removing the
 * legacy refresh path"), the session half while the import is offered; nothing outside the drawer but the callers'
 * one-line branches marked "legacy drawer" uses it.
 */

const objectOf = (deps: Deps, objectName: string) =>
  deps.env.REFRESH_SESSIONS.get(deps.env.REFRESH_SESSIONS.idFromName(objectName));

/** One rotation in the family's `RefreshSession` object, as a family rotation reads. */
async function rotateInObject(
  deps: Deps,
  objectName: string,
  family: string,
  request: RotationRequest,
): Promise<Rotation> {
  const result: RotateOutcome = await objectOf(deps, objectName).rotate(await objectRequest(deps, request));
  switch (result.outcome) {
    case "rotated":
      return { outcome: "rotated", family, token: request.successor, touch: false };
    case "grace":
      return {
        outcome: "grace",
        family,
        token: await decrypt(deps.config.secrets.encryptionKey, result.successorSealed),
      };
    default:
      return { outcome: result.outcome, family };
  }
}

// Sessions

/**
 * The unexpired session a token from before locators belongs to, through the `refresh_tokens` index, and the shard
 * that holds both (its user's). With several shards the directory names it: the import from Nhost writes a token's
 * `refresh` entry with its row. Null for a token no shard has.
 */
export async function legacySessionOfToken(
  deps: Deps,
  refreshToken: string,
): Promise<{ sessionId: string; db: Db } | null> {
  const tokenHash = await sha256Hex(refreshToken);
  const db = await shardOfEntry(deps.shards, { kind: "refresh", value: tokenHash });
  const row = await db
    ?.select({ sessionId: refreshTokens.sessionId })
    .from(refreshTokens)
    .where(and(eq(refreshTokens.tokenHash, tokenHash), gt(refreshTokens.expiresAt, deps.now())))
    .get();
  return db && row ? { sessionId: row.sessionId, db } : null;
}

/**
 * A session token that no family knows: if the index has it, it rotates in its object, and a first rotation starts
 * the session's family with the successor (a token of `successorFor(locator)`) and gives the session's row its
 * locator, so sign-out reaches the family from then on. `unknown` when the index has no such token.
 *
 * The object may rotate and the answer still be lost (the object reset after rotating, the family's start or the
 * row's write failing: a 503). The client's retry inside the grace window gets the same successor from the object,
 * so that successor's family is started here if its object does not know it yet (never reset past it), and the row
 * gets its locator if it has none: the one successor the client ends up with refreshes.
 */
export async function rotateLegacySessionToken(
  deps: Deps,
  refreshToken: string,
  request: Omit<RotationRequest, "presented" | "successor"> & {
    successorFor: (locator: string) => string;
    /** The locator a successor names (the inverse of `successorFor`). */
    locatorOf: (token: string) => string;
  },
): Promise<Rotation> {
  const legacy = await legacySessionOfToken(deps, refreshToken);
  if (!legacy) return { outcome: "unknown" };
  const { sessionId, db } = legacy;
  const locator = newLocator();
  const { lifetimeMs, graceMs } = request;
  const successor = request.successorFor(locator);
  const rotation = await rotateInObject(deps, sessionId, sessionId, {
    presented: refreshToken,
    successor,
    lifetimeMs,
    graceMs,
  });
  if (rotation.outcome === "rotated") {
    const now = deps.now();
    await Promise.all([
      startFamily(deps, locator, sessionId, successor, lifetimeMs),
      db
        .update(sessions)
        .set({ locator, lastUsedAt: now, expiresAt: now + lifetimeMs })
        .where(eq(sessions.id, sessionId)),
    ]);
  }
  if (rotation.outcome === "grace") {
    const handedAgain = request.locatorOf(rotation.token);
    await Promise.all([
      startFamily(deps, handedAgain, sessionId, rotation.token, lifetimeMs, { once: true }),
      db
        .update(sessions)
        .set({ locator: handedAgain })
        .where(and(eq(sessions.id, sessionId), isNull(sessions.locator))),
    ]);
  }
  return rotation;
}

/**
 * Sessions from before locators, just deleted by a sign-out: a rotation whose index lookup ran before the delete may
 * still reach the object, so the object is revoked too. Such a rotation has just written `last_used_at`, so only
 * sessions used within the last minute need the call, and at most fifty.
 */
export async function revokeLegacySessions(
  deps: Deps,
  removed: { id: string; lastUsedAt: number; locator: string | null }[],
  lifetimeMs: number,
): Promise<void> {
  const since = deps.now() - 60_000;
  const forgetAt = deps.now() + lifetimeMs;
  const recent = removed
    .filter((session) => session.locator === null && session.lastUsedAt >= since)
    .sort((a, b) => b.lastUsedAt - a.lastUsedAt)
    .slice(0, 50);
  await Promise.all(recent.map((session) => objectOf(deps, session.id).revoke(forgetAt)));
}

/** One session from before locators, deleted by a sign-out: its object refuses a rotation that raced the delete. */
export function revokeLegacySession(deps: Deps, sessionId: string, lifetimeMs: number): Promise<void> {
  return objectOf(deps, sessionId).revoke(deps.now() + lifetimeMs);
}

// OAuth2 grants

/** An OAuth2 refresh token from before grant-naming tokens. */
export const LEGACY_GRANT_TOKEN = /^ort_[A-Za-z0-9_-]{43}$/;

/** The grant of `clientId` a token from before grant-naming tokens belongs to, through the D1 index; else null. */
export async function legacyGrantOfToken(
  deps: Deps,
  clientId: string,
  refreshToken: string,
): Promise<string | null> {
  return (await findLegacyGrant(deps, clientId, refreshToken))?.grantId ?? null;
}

/**
 * The same grant and the shard that holds it (its user's): the grant's id is from before ids carried a slot, so a
 * caller that reads or writes the grant next uses this shard.
 */
export async function findLegacyGrant(
  deps: Deps,
  clientId: string,
  refreshToken: string,
): Promise<{ grantId: string; db: Db } | null> {
  if (!LEGACY_GRANT_TOKEN.test(refreshToken)) return null;
  const tokenHash = await sha256Hex(refreshToken);
  const now = deps.now();
  // These tokens predate the directory and name no user: every shard is asked (six at a time). A drawer with an end
  // date, reached only by a token of the old form: this fan-out never grows onto a current path.
  const found = await eachShard(deps.shards, async (db) => {
    const row = await db
      .select({ grantId: oauth2RefreshTokens.grantId })
      .from(oauth2RefreshTokens)
      .innerJoin(oauth2Grants, eq(oauth2Grants.id, oauth2RefreshTokens.grantId))
      .where(
        and(
          eq(oauth2RefreshTokens.tokenHash, tokenHash),
          eq(oauth2Grants.clientId, clientId),
          gt(oauth2RefreshTokens.expiresAt, now),
        ),
      )
      .get();
    return row ? { grantId: row.grantId, db } : null;
  });
  return found.find((grant) => grant !== null) ?? null;
}

/**
 * A grant's token from before, rotated once more in its object (`oauth2:<grantId>`); a first rotation starts the
 * grant's family at `locator` with the successor, and asks the caller to write the grant's last use (`touch`). A
 * duplicate inside the grace window starts that family if the first rotation's answer was lost before it did (see
 * `rotateLegacySessionToken`).
 */
export async function rotateLegacyGrantToken(
  deps: Deps,
  grantId: string,
  locator: string,
  request: RotationRequest,
): Promise<Rotation> {
  const rotation = await rotateInObject(deps, `oauth2:${grantId}`, grantId, request);
  if (rotation.outcome === "grace") {
    await startFamily(deps, locator, grantId, rotation.token, request.lifetimeMs, { once: true });
  }
  if (rotation.outcome !== "rotated") return rotation;
  await startFamily(deps, locator, grantId, rotation.token, request.lifetimeMs);
  return { ...rotation, touch: true };
}

/** Whether `token` is the one that rotates next in its grant's object (introspection of a token from before). */
export async function isCurrentLegacyGrantToken(
  deps: Deps,
  grantId: string,
  token: string,
): Promise<boolean> {
  return objectOf(deps, `oauth2:${grantId}`).isCurrent(await sha256Hex(token));
}
