import { eq } from "drizzle-orm";
import { writeThenBookmark } from "../../db/replica";
import { sessions } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import type { HasuraClaims } from "../../signing-keys/jwt";
import { familyOfCurrentToken } from "../../token-families";
import { liveSessionUser, type SessionUserRow } from "../hot-queries";
import {
  type ActiveMembership,
  activeMembership,
  membershipAmong,
  membershipsOfLocator,
} from "../org-membership";
import { shardOfSession } from "../session-shard";
import { claimsMayRefuse, customClaims } from "../token-claims";
import { liveSessionsOfLocator, locatorOnHome, pickBeside, readBeside } from "./read-beside";

/** What was read and decided before the refresh token was spent, for the session's family `family`. */
export interface BeforeRotation {
  family: string;
  /** The session and its user, read from the primary a moment before the rotation. */
  user: SessionUserRow;
  /** The custom claims, computed when they could refuse the token (`claimsMayRefuse`). */
  custom?: HasuraClaims;
  /** The membership of the organization asked to switch into. */
  org?: ActiveMembership;
  /**
   * The switch written to the session's row already (`orgId` differed from the session's), and the bookmark that
   * write reached, for the rotation to raise in its own run: the next refresh reads it back wherever it reads.
   */
  switched?: { bookmark: string | null };
}

/**
 * Whether nothing refuses the session after its rotation (renew.ts): a disabled user, an impersonation (which may
 * have ended), a session short of its second factor. Any of them: the switch is written after the rotation, as before.
 */
const mayWriteBefore = (user: SessionUserRow) =>
  !user.disabled && user.sessionActor === null && !user.sessionSecondFactorPending;

/**
 * What must be settled before a refresh spends its token, read once for both reasons there are (one family look-up in
 * the token's object and one read of the session, where there were two of each):
 * - a switch into an organization (`orgId`) the user may not act in is refused, 403 `not-org-member`, with the token
 *   unspent: the client keeps it;
 * - custom claims that could refuse the token (the app's GraphQL API, its CUSTOM_ACCESS_TOKEN hook) are computed, and
 *   a failure refuses the refresh with the token unspent: a rotation that then issued nothing would have spent the
 *   client's token, and its retry after the grace window would read as a replay and end the session (threat: an
 *   outage of the app's GraphQL API signing everybody out).
 * The presented token must be its family's current one, and its session live; else nothing is decided here and the
 * rotation decides as for any refresh (a duplicate inside the grace window, a replay, an unknown token). Undefined:
 * nothing needed, or nothing to decide on.
 */
export async function beforeRotation(
  deps: Deps,
  locator: string,
  refreshToken: string,
  now: number,
  orgId: string | null | undefined,
  authenticationMethod: string,
  /** The request's DPoP key (null: none): a bound family with another key decides nothing here. */
  dpopJkt: string | null = null,
): Promise<BeforeRotation | undefined> {
  const claims = claimsMayRefuse(deps.config);
  if (!orgId && !claims) return undefined;
  // The family's look-up and the session's read side by side (read-beside.ts): on the primary, as before. The look-up
  // also checks the request's DPoP key: a request its rotation would refuse has nothing written for it below.
  // Where the session is in the home database, the switch's membership is read in the same trip too, for every user
  // with a session of the locator (the session names the user only once read); used for the row picked from it.
  const [family, beside, members] = await Promise.all([
    familyOfCurrentToken(deps, locator, refreshToken, dpopJkt),
    readBeside(deps, locator, now, liveSessionsOfLocator),
    orgId && locatorOnHome(deps.shards, locator)
      ? membershipsOfLocator(deps, orgId, locator).catch(() => undefined)
      : undefined,
  ]);
  if (!family) return undefined;
  const db = await shardOfSession(deps.shards, family);
  const picked = pickBeside(beside, family, null, true);
  const user = picked ?? (db && (await liveSessionUser.first(db.$client, { sessionId: family, now })));
  if (!user) return undefined;
  const org = !orgId
    ? undefined
    : picked && members
      ? membershipAmong(members, orgId, user.id)
      : await activeMembership(deps, orgId, user.id);
  if (orgId && !org) throw new AppError("not-org-member");
  // A disabled user is refused after the rotation (`disabled-user`); their claims are never asked for.
  const custom = claims && !user.disabled ? await customClaims(deps, user, authenticationMethod) : undefined;
  // The switch is written before the token is spent, once everything that could refuse it has passed (the token
  // current and its key proved, the membership, the claims; a session refused after the rotation is written after
  // it, as before: issue 48, "Round trips"): its bookmark then rides in the rotation's call instead of a call of its own
  // after the write. A write that fails answers 503 with the token unspent.
  const switched =
    org && db && mayWriteBefore(user) && org.orgId !== user.sessionOrgId
      ? {
          bookmark: await writeThenBookmark(db.$client, (primary) =>
            primary.update(sessions).set({ orgId: org.orgId }).where(eq(sessions.id, family)).run(),
          ),
        }
      : undefined;
  return { family, user, custom, org, switched };
}
