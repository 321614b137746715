import { and, eq, inArray, isNull } from "drizzle-orm";
import type { Config } from "../config";
import { orgMembers, orgSessionHints, sessions } from "../db/schema";
import { slotOfUser } from "../db/shards";
import type { Deps } from "../http/deps";

/**
 * What a session may carry of an organization (contract organizations.md §1). Auth owns it, since every token it
 * signs asks; the organizations feature (src/orgs/) manages the rows and uses this through auth's index.
 */

export const BUILT_IN_ORG_ROLES = ["owner", "admin", "member"] as const;

/** Every role a member may have: the built-in three, then `AUTH_ORG_ROLES`. */
export function orgRoles(config: Pick<Config, "orgs">): string[] {
  return [...BUILT_IN_ORG_ROLES, ...config.orgs.roles.filter((role) => !isBuiltIn(role))];
}

const isBuiltIn = (role: string) => (BUILT_IN_ORG_ROLES as readonly string[]).includes(role);

export interface ActiveMembership {
  orgId: string;
  role: string;
}

/**
 * The user's membership of the organization, when it exists and is active (SCIM's `active: false` suspends it). One
 * primary-key read in the home database, where organizations live.
 */
export async function activeMembership(
  deps: Pick<Deps, "db">,
  orgId: string,
  userId: string,
): Promise<ActiveMembership | undefined> {
  const row = await deps.db
    .select({ role: orgMembers.role, active: orgMembers.active })
    .from(orgMembers)
    .where(and(eq(orgMembers.orgId, orgId), eq(orgMembers.userId, userId)))
    .get();
  return row?.active ? { orgId, role: row.role } : undefined;
}

/** A membership row read beside a rotation, by its user and org. */
export interface MemberRow {
  userId: string;
  orgId: string;
  role: string;
  active: boolean;
}

/**
 * Memberships read beside a refresh's rotation, before the session's row names its user (issue 48, "Round trips";
 * src/auth/sessions/session-org.ts). `settles(userId, orgId)`: whether that membership missing from `rows` means
 * there is none (false: it is read after the rotation, as before). `via`: how they were found. `locator`: through the
 * locator's sessions in the home database, so only for a session row read beside too, from that same database;
 * `slot`: the org's members of the token's slot; `hints`: through the home database's hints of the locator's
 * sessions kept elsewhere (`org_session_hints`).
 */
export interface MembersBeside {
  rows: MemberRow[];
  settles: (userId: string, orgId: string) => boolean;
  via: "locator" | "slot" | "hints";
}

const MEMBER_COLUMNS = {
  userId: orgMembers.userId,
  orgId: orgMembers.orgId,
  role: orgMembers.role,
  active: orgMembers.active,
};

/**
 * An org switch's memberships where the token's sessions are in the home database: the org's memberships of every
 * user with a session of `locator` (a handful at most: few sessions share a locator). Absent: no member.
 */
export async function membershipsOfLocator(
  deps: Pick<Deps, "db">,
  orgId: string,
  locator: string,
): Promise<MembersBeside> {
  const users = deps.db
    .select({ userId: sessions.userId })
    .from(sessions)
    .where(eq(sessions.locator, locator));
  const rows = await deps.db
    .select(MEMBER_COLUMNS)
    .from(orgMembers)
    .where(and(eq(orgMembers.orgId, orgId), inArray(orgMembers.userId, users)))
    .all();
  return { rows, settles: () => true, via: "locator" };
}

/**
 * An org switch's memberships where the token's sessions are in another database: the org's members of the token's
 * slot (`org_members_slot`; the slot is the locator's first three hex digits for sessions minted since locators
 * carry it). A user not among them is read after: a row from before the slot column (NULL until filled), or a token
 * whose locator predates slots. Tens of rows for an org of 100,000 members (4,096 slots).
 */
export async function membershipsOfSlot(
  deps: Pick<Deps, "db">,
  orgId: string,
  slot: number,
): Promise<MembersBeside> {
  const rows = await deps.db
    .select(MEMBER_COLUMNS)
    .from(orgMembers)
    .where(and(eq(orgMembers.orgId, orgId), eq(orgMembers.userSlot, slot)))
    .all();
  return { rows, settles: () => false, via: "slot" };
}

/** How many of their other memberships a plain refresh reads beside its rotation, at most (see `orgsOfLocator`). */
export const ORGS_BESIDE = 32;

/**
 * A plain refresh of a session in an org (its token says so: `mintedInOrg`), where the token's sessions are in the
 * home database: which org the session acts in is known only from the rotation's answer (the object's org) or the
 * session's row, so this reads, in one batch (one trip), for every session of `locator`: its user's membership of
 * the org its row names (exact: a primary-key look-up each), and any of the locator's users' memberships, at most
 * ORGS_BESIDE (for the object's org when it differs from the row's, which follows after the answer). Bounded either
 * way, however many orgs a user is in. A user's membership of an org missing means none only when that org is their
 * session row's, or when nothing was left out and the user was seen.
 */
export async function orgsOfLocator(deps: Pick<Deps, "db">, locator: string): Promise<MembersBeside> {
  const [own, others] = await deps.db.batch([
    deps.db
      .select({
        userId: sessions.userId,
        askedOrg: sessions.orgId,
        orgId: orgMembers.orgId,
        role: orgMembers.role,
        active: orgMembers.active,
      })
      .from(sessions)
      .leftJoin(orgMembers, and(eq(orgMembers.userId, sessions.userId), eq(orgMembers.orgId, sessions.orgId)))
      .where(eq(sessions.locator, locator)),
    deps.db
      .select(MEMBER_COLUMNS)
      .from(orgMembers)
      .innerJoin(sessions, eq(sessions.userId, orgMembers.userId))
      .where(eq(sessions.locator, locator))
      .limit(ORGS_BESIDE),
  ]);
  const whole = others.length < ORGS_BESIDE;
  const { asked, found } = askedAndFound(own);
  const seen = new Set(own.map((row) => row.userId));
  return {
    rows: [...found, ...others],
    settles: (userId, orgId) => asked.has(`${userId} ${orgId}`) || (whole && seen.has(userId)),
    via: "locator",
  };
}

/**
 * A LEFT JOIN of memberships onto (user, org) pairs asked for (a session row's org, a hint's): the pairs asked
 * (`user org`), each of which the join settles, and the memberships it found.
 */
function askedAndFound(
  joined: {
    userId: string;
    askedOrg: string | null;
    orgId: string | null;
    role: string | null;
    active: boolean | null;
  }[],
): { asked: Set<string>; found: MemberRow[] } {
  return {
    asked: new Set(joined.map((row) => `${row.userId} ${row.askedOrg}`)),
    found: joined.flatMap(({ userId, orgId, role, active }) =>
      orgId !== null && role !== null && active !== null ? [{ userId, orgId, role, active }] : [],
    ),
  };
}

/**
 * A plain refresh of a session in an org (`mintedInOrg`) whose sessions are kept in another database: the home
 * database's hints of the locator's sessions (`org_session_hints`: which user and org each acts in), each with that
 * user's membership of that org, in one statement on the primary (one trip, beside the rotation). A hint says which
 * membership to read, never that there is one: the membership is this read's, and a hinted membership missing means
 * none, exactly for that user and org. Any other user or org (a hint missing, stale, or lost) is read after the
 * session's row, as before, and the hint written then (`keepOrgHint`). Few sessions share a locator; bounded all
 * the same.
 */
export async function orgsOfHints(deps: Pick<Deps, "db">, locator: string): Promise<MembersBeside> {
  const hinted = await deps.db
    .select({
      userId: orgSessionHints.userId,
      askedOrg: orgSessionHints.orgId,
      orgId: orgMembers.orgId,
      role: orgMembers.role,
      active: orgMembers.active,
    })
    .from(orgSessionHints)
    .leftJoin(
      orgMembers,
      and(eq(orgMembers.orgId, orgSessionHints.orgId), eq(orgMembers.userId, orgSessionHints.userId)),
    )
    .where(eq(orgSessionHints.locator, locator))
    .limit(ORGS_BESIDE)
    .all();
  const { asked, found } = askedAndFound(hinted);
  return { rows: found, settles: (userId, orgId) => asked.has(`${userId} ${orgId}`), via: "hints" };
}

/**
 * The hint that lets the next plain refresh of a session kept elsewhere read its membership beside the rotation
 * (`orgsOfHints`): written after a refresh's answer, when the session acts in `orgId` and no hint named it.
 */
export const keepOrgHint = (
  deps: Pick<Deps, "db">,
  hint: { sessionId: string; locator: string; userId: string; orgId: string; now: number },
) =>
  deps.db
    .insert(orgSessionHints)
    .values({
      sessionId: hint.sessionId,
      locator: hint.locator,
      userId: hint.userId,
      orgId: hint.orgId,
      writtenAt: hint.now,
    })
    .onConflictDoUpdate({
      target: orgSessionHints.sessionId,
      set: { locator: hint.locator, userId: hint.userId, orgId: hint.orgId, writtenAt: hint.now },
    })
    .run();

/**
 * `activeMembership`'s answer for `userId` in `orgId` from the rows read beside: the membership, null when the rows
 * settle that there is none, undefined when they cannot say (read it after).
 */
export function membershipAmong(
  beside: MembersBeside,
  orgId: string,
  userId: string,
): ActiveMembership | null | undefined {
  const row = beside.rows.find((candidate) => candidate.userId === userId && candidate.orgId === orgId);
  if (row) return row.active ? { orgId, role: row.role } : null;
  return beside.settles(userId, orgId) ? null : undefined;
}

/**
 * A membership found after a slot read missed it: its slot is written if it has none yet (a row from before the
 * column), after the answer, so the member's next switch elsewhere is read beside its rotation.
 */
export const fillMemberSlot = (deps: Pick<Deps, "db">, orgId: string, userId: string) =>
  deps.db
    .update(orgMembers)
    .set({ userSlot: slotOfUser(userId) })
    .where(and(eq(orgMembers.orgId, orgId), eq(orgMembers.userId, userId), isNull(orgMembers.userSlot)))
    .run();
