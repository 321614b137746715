import { and, eq, inArray } from "drizzle-orm";
import type { Config } from "../config";
import { orgMembers, sessions } from "../db/schema";
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

/** A membership row of `membershipsOfLocator`, by its user. */
export interface MemberRow {
  userId: string;
  role: string;
  active: boolean;
}

/**
 * The organization's memberships of every user with a session of `locator` (a handful at most: few sessions share a
 * locator): an org switch reads them in the same trip as the session, before it knows whose session it is (issue 48,
 * "Round trips"). Only where the locator's sessions are in the home database, beside `org_members`.
 */
export function membershipsOfLocator(
  deps: Pick<Deps, "db">,
  orgId: string,
  locator: string,
): Promise<MemberRow[]> {
  const users = deps.db
    .select({ userId: sessions.userId })
    .from(sessions)
    .where(eq(sessions.locator, locator));
  return deps.db
    .select({ userId: orgMembers.userId, role: orgMembers.role, active: orgMembers.active })
    .from(orgMembers)
    .where(and(eq(orgMembers.orgId, orgId), inArray(orgMembers.userId, users)))
    .all();
}

/** `activeMembership`'s answer for `userId`, from the rows `membershipsOfLocator` read. */
export function membershipAmong(
  rows: MemberRow[],
  orgId: string,
  userId: string,
): ActiveMembership | undefined {
  const row = rows.find((candidate) => candidate.userId === userId);
  return row?.active ? { orgId, role: row.role } : undefined;
}
