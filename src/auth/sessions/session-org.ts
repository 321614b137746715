import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sessions } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { type Rotation, setFamilyOrg, setFamilyOrgIf, undoOrgSwitch } from "../../token-families";
import type { SessionUserRow } from "../hot-queries";
import { locatorOf } from "../new-sessions";
import {
  type ActiveMembership,
  activeMembership,
  type MemberRow,
  membershipAmong,
  membershipsOfLocator,
} from "../org-membership";
import { locatorOnHome } from "./read-beside";

/**
 * The organization a renewed session acts in (contract organizations.md §1), and an org switch in the rotation's
 * wave (issue 48, "an org switch adds no wave"; docs/decisions.md, "Issue 48: the org switch in one wave").
 *
 * A switch (`POST /token {refreshToken, orgId}`) is recorded by the rotation itself, in the family's object
 * (src/token-families/family-orgs.ts), while the membership is read beside it: where the token's sessions are in the
 * home database, `org_members`' database, the memberships of every user with a session of the token's locator (the
 * session names its user only once read; only the picked row's user's is used); elsewhere the user's membership
 * after the session's read. A refused switch puts the rotation back before the 403 (`undoOrgSwitch`): the client's
 * token is current again. The session's row gets the org after the answer; the object's org is what the next refresh
 * starts from, and every refresh of a session in an org reads its membership again, so neither an org recorded for a
 * switch then refused nor one whose membership has gone since is ever carried by a token.
 */

/** The switch's memberships read beside the rotation, where that is possible (see above); undefined otherwise. */
export function membersBeside(
  deps: Deps,
  locator: string,
  orgId: string | null | undefined,
): Promise<MemberRow[] | undefined> | undefined {
  return orgId && locatorOnHome(deps.shards, locator)
    ? membershipsOfLocator(deps, orgId, locator).catch(() => undefined)
    : undefined;
}

export interface RenewedOrg {
  /** The session's shard, and its row and user as the refresh read them. */
  db: Db;
  user: SessionUserRow;
  rotation: Extract<Rotation, { outcome: "rotated" | "grace" }>;
  /** The presented token's locator: the object that rotated it, which `undoOrgSwitch` asks. */
  locator: string;
  /** The successor this request offered: it names the request's switch in the object. */
  successor: string;
  /** The org asked for (null: out of any); undefined keeps the session's. */
  orgId: string | null | undefined;
  /** The switch's membership, read before the rotation (before-rotation.ts): not read again. */
  checked?: ActiveMembership;
  /** `membersBeside`'s rows, when the user's row came from the read beside the rotation too (the same database). */
  members?: MemberRow[];
}

/**
 * The org the renewed session acts in: the one asked for, else the session's own (its object's when it holds one,
 * else its row's). Its membership is read on every refresh of a session that has one: a member removed, deactivated
 * by SCIM, or an org deleted, and the token comes back without the org (one primary-key read in the home database,
 * none for a session without). A switch into an org the user is no active member of: 403 `not-org-member`, with the
 * token unspent when nothing else has used the family since its rotation.
 */
export async function renewedOrg(
  deps: Deps,
  renewed: RenewedOrg,
): Promise<{ org: ActiveMembership | undefined; settle: () => void }> {
  const { db, user, rotation, orgId } = renewed;
  const { family } = rotation;
  const holds = rotation.org !== undefined;
  const held = rotation.org !== undefined ? rotation.org : user.sessionOrgId;
  const wanted = orgId === undefined ? held : orgId;
  const recorded = rotation.outcome === "rotated" && rotation.switched === true;
  // Awaited: the client's next try with the same token must find it current again.
  const undo = () => (recorded ? undoOrgSwitch(deps, renewed.locator, family, renewed.successor) : undefined);
  let org: ActiveMembership | undefined;
  try {
    org = !wanted
      ? undefined
      : renewed.checked?.orgId === wanted
        ? renewed.checked
        : orgId && renewed.members
          ? membershipAmong(renewed.members, orgId, user.id)
          : await activeMembership(deps, wanted, user.id);
  } catch (fault) {
    // The membership unread (a D1 fault: 503): the switch is put back as a refusal's, the token unspent.
    await Promise.resolve(undo()).catch(() => undefined);
    throw fault;
  }
  if (orgId && !org) {
    await undo();
    throw new AppError("not-org-member");
  }
  const stored = org?.orgId ?? null;
  // The successor's object (a token from before families moved onto one by this refresh has a new locator).
  const locator = locatorOf(rotation.token);
  if (orgId !== undefined && !recorded) {
    // A switch its rotation did not record (a duplicate inside the grace window, a token from before families): the
    // object gets it now, a call more on a path that is rare.
    await setFamilyOrg(deps, locator, family, stored);
  }
  // What follows is written once the answer is made (`settle`), so it is on no answer's path. The membership gone:
  // the object forgets the org, unless a switch has set another since. The row follows the org: what the next refresh
  // starts from is the object's, and SCIM's revocation by org (src/orgs/members.ts) reads the row. A row read before a
  // write of its own reached it is written again, the same value.
  const forget = orgId === undefined && holds && stored !== wanted;
  const rewrite = stored !== user.sessionOrgId;
  const settle = () => {
    if (forget) deps.background(setFamilyOrgIf(deps, locator, family, wanted, stored));
    if (rewrite) {
      deps.background(db.update(sessions).set({ orgId: stored }).where(eq(sessions.id, family)).run());
    }
  };
  return { org, settle };
}
