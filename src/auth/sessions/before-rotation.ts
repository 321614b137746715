import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import type { HasuraClaims } from "../../signing-keys/jwt";
import { familyOfCurrentToken } from "../../token-families";
import { liveSessionUser, type SessionUserRow } from "../hot-queries";
import { type ActiveMembership, activeMembership, membershipAmong } from "../org-membership";
import { shardOfSession } from "../session-shard";
import { claimsMayRefuse, customClaims } from "../token-claims";
import { liveSessionsOfLocator, pickBeside, readBeside } from "./read-beside";
import { membersBeside } from "./session-org";

/** What was read and decided before the refresh token was spent, for the session's family `family`. */
export interface BeforeRotation {
  family: string;
  /** The session and its user, read from the primary a moment before the rotation. */
  user: SessionUserRow;
  /** The custom claims, computed when they could refuse the token (`claimsMayRefuse`). */
  custom?: HasuraClaims;
  /** The membership of the organization asked to switch into. */
  org?: ActiveMembership;
}

/**
 * What must be settled before a refresh spends its token when custom claims could refuse it (an org switch alone is
 * decided in the rotation's wave: session-org.ts), read once (one family look-up in the token's object and one read
 * of the session):
 * - custom claims that could refuse the token (the app's GraphQL API, its CUSTOM_ACCESS_TOKEN hook) are computed, and
 *   a failure refuses the refresh with the token unspent: a rotation that then issued nothing would have spent the
 *   client's token, and its retry after the grace window would read as a replay and end the session (threat: an
 *   outage of the app's GraphQL API signing everybody out);
 * - then, a switch into an organization (`orgId`) the user may not act in is refused here too, 403
 *   `not-org-member`, with the token unspent: the client keeps it.
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
  if (!claims) return undefined;
  // The family's look-up and the session's read side by side (read-beside.ts): on the primary, as before. The look-up
  // also checks the request's DPoP key: a request its rotation would refuse has nothing decided for it below.
  // Where the session is in the home database, the switch's membership is read in the same trip too (session-org.ts).
  const [family, beside, members] = await Promise.all([
    familyOfCurrentToken(deps, locator, refreshToken, dpopJkt),
    readBeside(deps, locator, now, liveSessionsOfLocator),
    membersBeside(deps, locator, orgId, false),
  ]);
  if (!family) return undefined;
  const db = await shardOfSession(deps.shards, family);
  const picked = pickBeside(beside, family, null, true);
  const user = picked ?? (db && (await liveSessionUser.first(db.$client, { sessionId: family, now })));
  if (!user) return undefined;
  const among =
    orgId && members && (picked || members.via !== "locator")
      ? membershipAmong(members, orgId, user.id)
      : undefined;
  const org = !orgId
    ? undefined
    : among !== undefined
      ? (among ?? undefined)
      : await activeMembership(deps, orgId, user.id);
  if (orgId && !org) throw new AppError("not-org-member");
  // A disabled user is refused after the rotation (`disabled-user`); their claims are never asked for.
  const custom = !user.disabled ? await customClaims(deps, user, authenticationMethod) : undefined;
  // The switch itself is recorded by the rotation (session-org.ts), as without claims.
  return { family, user, custom, org };
}
