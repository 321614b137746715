import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sessions } from "../../db/schema";
import { slotOfUser } from "../../db/shards";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { type Rotation, setFamilyOrg, setFamilyOrgIf, undoOrgSwitch } from "../../token-families";
import type { SessionUserRow } from "../hot-queries";
import { locatorOf, mintedInOrg } from "../new-sessions";
import {
  type ActiveMembership,
  activeMembership,
  fillMemberSlot,
  keepOrgHint,
  type MembersBeside,
  membershipAmong,
  membershipsOfLocator,
  membershipsOfSlot,
  orgsOfHints,
  orgsOfLocator,
} from "../org-membership";
import { locatorOnHome, slotOfLocator } from "./read-beside";

/**
 * The organization a renewed session acts in (contract organizations.md §1), and an org switch in the rotation's
 * wave (issue 48, "an org switch adds no wave"; docs/decisions.md, "Issue 48: the org switch in one wave").
 *
 * A switch (`POST /token {refreshToken, orgId}`) is recorded by the rotation itself, in the family's object
 * (src/token-families/family-orgs.ts), while the membership is read beside it: where the token's sessions are in the
 * home database, `org_members`' database, the memberships of every user with a session of the token's locator (the
 * session names its user only once read; only the picked row's user's is used); elsewhere the org's members of the
 * token's slot (`org_members.user_slot`), the user's picked once the session's row names it, and read after it when
 * not among them (a row from before the slot column). A plain refresh whose token was minted in an org
 * (`mintedInOrg`) reads its memberships beside the rotation too: in the home database by the locator's sessions,
 * elsewhere by the home database's hints of them (`org_session_hints`), which the refresh that first finds the org
 * writes (docs/decisions.md, "Issue 48: a refresh in an org in one wave", "… elsewhere"). A refused switch puts
 * the rotation back before the 403 (`undoOrgSwitch`): the client's token is current again. The session's row gets
 * the org after the answer; the object's org is what the next refresh starts from, and every refresh of a session in
 * an org reads its membership again, so neither an org recorded for a switch then refused nor one whose membership
 * has gone since is ever carried by a token.
 */

/**
 * The memberships read beside the rotation, where that is possible; undefined otherwise. A switch: the org's
 * memberships of the locator's users (home database) or of the token's slot (elsewhere). A plain refresh whose token
 * says its session acts in an org (`inOrg`): every membership of the locator's users (home database), or the
 * memberships the home database's hints name for the locator's sessions (elsewhere: the org is known only after the
 * rotation, and a slot's memberships of every org are too many rows). Nothing for a session in no org, nor for a
 * switch out of any (`orgId: null`): those refreshes read nothing more.
 */
export function membersBeside(
  deps: Deps,
  locator: string,
  orgId: string | null | undefined,
  inOrg: boolean,
): Promise<MembersBeside | undefined> | undefined {
  const onHome = locatorOnHome(deps.shards, locator);
  const read = orgId
    ? onHome
      ? membershipsOfLocator(deps, orgId, locator)
      : membershipsOfSlot(deps, orgId, slotOfLocator(locator))
    : orgId === undefined && inOrg
      ? onHome
        ? orgsOfLocator(deps, locator)
        : orgsOfHints(deps, locator)
      : undefined;
  // A failed read is no answer: the membership is read after the rotation, where a D1 fault shows.
  return read?.catch(() => undefined);
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
  /**
   * `membersBeside`'s rows; those read by the locator only when the user's row came from the read beside the
   * rotation too (the same database).
   */
  members?: MembersBeside;
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
  let readBy: ReadBy | undefined;
  try {
    if (wanted) ({ org, readBy } = await membershipIn(deps, renewed, wanted));
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
  // A session kept elsewhere whose successor says it acts in an org: the next plain refresh reads the membership
  // beside its rotation only through a hint naming this org (`orgsOfHints`), so one is written unless this refresh
  // found the membership through one.
  const hint =
    org && readBy !== "hints" && mintedInOrg(rotation.token) && !locatorOnHome(deps.shards, locator)
      ? { sessionId: family, locator, userId: user.id, orgId: org.orgId, now: deps.now() }
      : undefined;
  const settle = () => {
    if (forget) deps.background(setFamilyOrgIf(deps, locator, family, wanted, stored));
    if (rewrite) {
      deps.background(db.update(sessions).set({ orgId: stored }).where(eq(sessions.id, family)).run());
    }
    // A membership the read of the token's slot missed, that slot being its user's: a row from before the slot was
    // kept (a token whose locator predates slots names another slot, and there is nothing to fill).
    if (org && readBy === "after slot" && slotOfLocator(renewed.locator) === slotOfUser(user.id))
      deps.background(fillMemberSlot(deps, org.orgId, user.id));
    if (hint) deps.background(keepOrgHint(deps, hint));
  };
  return { org, settle };
}

/**
 * How the membership was found: checked before the rotation, read beside it (by the locator, the slot or the
 * hints), or read after it, when the read beside could not settle it (`after slot`: the slot's read missed it) or
 * there was none.
 */
type ReadBy = "before" | MembersBeside["via"] | "after" | "after slot";

/** The user's active membership of `wanted`: checked before the rotation, read beside it, or else read now. */
async function membershipIn(
  deps: Deps,
  { checked, members, user }: RenewedOrg,
  wanted: string,
): Promise<{ org: ActiveMembership | undefined; readBy: ReadBy }> {
  if (checked?.orgId === wanted) return { org: checked, readBy: "before" };
  const among = members && membershipAmong(members, wanted, user.id);
  if (among !== undefined && members) return { org: among ?? undefined, readBy: members.via };
  return {
    org: await activeMembership(deps, wanted, user.id),
    readBy: members?.via === "slot" ? "after slot" : "after",
  };
}
