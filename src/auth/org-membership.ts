import { and, eq } from "drizzle-orm";
import type { Config } from "../config";
import { orgMembers } from "../db/schema";
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
