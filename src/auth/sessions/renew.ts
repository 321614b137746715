import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { firstNearby } from "../../db/compiled-read";
import { sessions } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { type Rotation, rotateInFamily } from "../../token-families";
import { rotateLegacySessionToken } from "../../token-families/legacy";
import { liveSessionUser, type SessionUserRow } from "../hot-queries";
import {
  type AccessTokenMinter,
  buildSession,
  locatorOf,
  mintedInOrg,
  newSessionToken,
  refreshLifetimeMs,
  type Session,
  UUID_SHAPE,
} from "../new-sessions";
import type { MembersBeside } from "../org-membership";
import { shardOfSession } from "../session-shard";
import { beforeRotation } from "./before-rotation";
import type { LiveSessionRead } from "./live-session";
import { pickBeside, readBeside } from "./read-beside";
import { membersBeside, renewedOrg } from "./session-org";

/**
 * `POST /token` (contract §5.2): a session renewed by its refresh token. The token's family rotates in its
 * `SessionFamilies` object (src/token-families/); beside it (read-beside.ts, one wave)
 * one read of the session and its user: the session must still exist (sign-out everywhere, a password
 * change, an admin revocation delete it), the user must be enabled, and the new access token carries the user's
 * current claims. No D1 write: the session's last-used time and sliding expiry are written after the answer when the
 * object says they are due.
 *
 * The read may be served by a nearby replica (docs/decisions.md, "Reads near the user"): at least as fresh as the
 * family's bookmark (the user's own writes through this session), and from the primary when the replica has not got
 * the session yet (a sign-in a moment ago). Revocations reach the family's object, so a replica's lag never lets a
 * signed-out token refresh.
 *
 * A session bound to a DPoP key (RFC 9449, docs/oauth2.md §10.2) refreshes only with a proof by that key: the family's
 * object checks it in the same run as the rotation, so a refresh without it spends nothing. An unbound session is
 * bound by the first refresh that carries a proof; the key goes to `sessions.dpop_jkt` after the answer, for the record
 * (the refresh path still reads nothing for it).
 */
export async function renewSession(
  deps: Deps,
  refreshToken: string,
  /** `0` when a token must be spent exactly once, with no duplicate allowed (the OAuth2 page's magic-link landing). */
  graceMs = deps.config.tokens.reuseInterval * 1000,
  /** Switch the session into this organization (`null`: out of any); undefined keeps the session's. */
  orgId?: string | null,
  /**
   * The request's DPoP key (`signInScope`'s, checked by `sessionProof` before the token can be spent), and how the
   * custom-access-token hook is told the token came to be: `refresh` at `POST /token`; the built-in page, which
   * spends a session it just got through the API, says its own method.
   */
  {
    dpopJkt = null,
    authenticationMethod = "refresh",
    minter,
    alongside,
    importedShape,
  }: {
    /**
     * A face's own read of the live session and its user (`liveSessionRead`: the session check's columns and the
     * face's, by the session's id, since the user is not known before), made instead of the Nhost face's, on the
     * primary: one statement. Its row is left in `row`.
     */
    alongside?: Alongside;
    dpopJkt?: string | null;
    authenticationMethod?: string;
    /** The face's own access token (src/faces/); none: the Nhost face's. */
    minter?: AccessTokenMinter;
    /** Refresh tokens of another system this face takes (GoTrue's), found only among imported ones. */
    importedShape?: RegExp;
  } = {},
): Promise<Session> {
  // A face's imported token of another shape (GoTrue's) names no family: only the legacy drawer can know it.
  const foreign = !UUID_SHAPE.test(refreshToken);
  if (foreign && !importedShape?.test(refreshToken)) throw new AppError("invalid-refresh-token");
  const now = deps.now();
  let locator = locatorOf(refreshToken);
  const lifetimeMs = refreshLifetimeMs(deps);
  // Claims that can refuse the token are settled before the token is spent (before-rotation.ts).
  const early = foreign
    ? undefined
    : await beforeRotation(deps, locator, refreshToken, now, orgId, authenticationMethod, dpopJkt);
  // The session and its user, read beside the rotation, not after it (read-beside.ts): one wave where there were
  // two. Not when they were read before it already, nor for a face whose read has no such form.
  const beside =
    foreign || early || (alongside && !alongside.read.byLocator)
      ? undefined
      : readBeside(deps, locator, now, alongside?.read.byLocator);
  // Whether the session acts in an org, as far as its token says (a hint: the membership is read all the same).
  const inOrg = !foreign && mintedInOrg(refreshToken);
  // An org's memberships, beside too where they can be (session-org.ts); the rotation records a switch.
  const members = foreign || early ? undefined : membersBeside(deps, locator, orgId, inOrg);
  // The successor says whether its session acts in an org: a switch's from the org asked for, a plain refresh's as
  // the presented token did (a membership gone since costs that session a read beside that finds nothing).
  const successor = newSessionToken(locator, orgId === undefined ? inOrg : orgId !== null);
  let rotation: Rotation = foreign
    ? { outcome: "unknown" }
    : await rotateInFamily(deps, locator, {
        presented: refreshToken,
        successor,
        lifetimeMs,
        graceMs,
        dpopJkt,
        ...(orgId === undefined ? {} : { switchTo: { org: orgId } }),
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
  // The session's family from now on is the successor's.
  if (foreign && (rotation.outcome === "rotated" || rotation.outcome === "grace"))
    locator = locatorOf(rotation.token);
  if (rotation.outcome === "key-mismatch") {
    throw new AppError(
      "invalid-refresh-token",
      "this session is DPoP-bound: refresh it with a DPoP proof signed by its key",
    );
  }
  if (rotation.outcome !== "rotated" && rotation.outcome !== "grace")
    return endReplayedSession(deps, rotation);
  // The family is the session's id, which names the shard of the session and its user. Read before the rotation
  // for this same family, the row is not read again: a revocation since then reached the family's object, which
  // would not have rotated.
  const db = await shardOfSession(deps.shards, rotation.family);
  const settled = early?.family === rotation.family ? early : undefined;
  // Picked by the family the object answered: only the row of the session whose token was current is used.
  const found = pickBeside(beside && (await beside), rotation.family, rotation.bookmark, !!alongside);
  if (found && alongside) alongside.row = found;
  const user =
    found ??
    (alongside && db
      ? await readAlongside(db, rotation.family, now, alongside, settled?.user)
      : (settled?.user ??
        (db &&
          (await firstNearby(
            db.$client,
            liveSessionUser,
            { sessionId: rotation.family, now },
            rotation.bookmark,
          )))));
  if (!db || !user) throw new AppError("invalid-refresh-token");
  if (user.disabled) throw new AppError("disabled-user");
  // An impersonation refreshes up to its end and never past it (contract operators.md §1); its family's sliding
  // expiry does not know that end, this row does.
  const impersonation = impersonationOf(user);
  if (impersonation && now >= impersonation.endsAt)
    throw new AppError("invalid-refresh-token", "this impersonation has ended");
  // A Supabase face's session short of the user's second factor (GoTrue's aal1): the Nhost face, whose tokens exist
  // only once every factor was shown, renews none of it (docs/decisions.md, "Issue 43: MFA").
  if (user.sessionSecondFactorPending && !minter) {
    throw new AppError("invalid-refresh-token", "this session has not shown the second factor yet");
  }
  // Before the session's writes below: a refused switch puts its rotation back (session-org.ts).
  const { org, settle } = await renewedOrg(deps, {
    db,
    user,
    rotation,
    locator,
    successor,
    orgId,
    checked: settled?.org,
    // Memberships read by the locator belong with the row read beside (the same database), not with one read after.
    members: await besideFor(members, !!found),
  });
  if (rotation.outcome === "rotated" && (rotation.touch || rotation.bound)) {
    const expiresAt = Math.min(now + lifetimeMs, impersonation?.endsAt ?? Number.POSITIVE_INFINITY);
    const touched = rotation.touch ? { lastUsedAt: now, expiresAt } : {};
    const bound = rotation.bound ? { dpopJkt: rotation.jkt } : {};
    deps.background(
      db
        .update(sessions)
        .set({ ...touched, ...bound })
        .where(eq(sessions.id, rotation.family))
        .run(),
    );
  }
  // The family's key, as the object holds it (a legacy token's first rotation binds nothing: the next one may).
  const jkt = rotation.jkt ?? null;
  const session = await buildSession(deps, user, rotation.family, rotation.token, now, {
    custom: settled?.custom,
    org,
    dpopJkt: jkt,
    authenticationMethod,
    mint: minter && {
      minter,
      method: user.sessionMethod,
      startedAt: user.sessionStartedAt,
      secondFactorPending: user.sessionSecondFactorPending,
    },
    impersonation,
  });
  // The org's writes once the answer is made (session-org.ts).
  settle();
  return session;
}

/** The memberships read beside, unless read by the locator while the session's row was read after. */
async function besideFor(
  members: Promise<MembersBeside | undefined> | undefined,
  rowBeside: boolean,
): Promise<MembersBeside | undefined> {
  const read = await members;
  return read && (rowBeside || read.via !== "locator") ? read : undefined;
}

/** The impersonation a session row records (its actor and end), if it is one. */
export const impersonationOf = (row: { sessionActor: string | null; sessionEndsAt: number | null }) =>
  row.sessionActor !== null && row.sessionEndsAt !== null
    ? { actor: row.sessionActor, endsAt: row.sessionEndsAt }
    : null;

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

/** A face's read of the live session (see `renewSession`'s `alongside`), and the row it left. */
export interface Alongside {
  read: LiveSessionRead<SessionUserRow>;
  row?: SessionUserRow;
}

/**
 * The session's user by a face's own read, one statement on the primary of the session's shard. When the user was
 * already read (before an org switch's rotation), the face's read runs all the same for its own columns; the user
 * answered is still the one read before the rotation (see `renewSession`).
 */
async function readAlongside(
  db: Db,
  sessionId: string,
  now: number,
  alongside: Alongside,
  known: SessionUserRow | undefined,
): Promise<SessionUserRow | undefined> {
  alongside.row = await alongside.read.first(db.$client, { sessionId, now });
  return known ?? alongside.row;
}
