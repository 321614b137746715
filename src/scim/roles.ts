import { and, eq, isNotNull, ne } from "drizzle-orm";
import { orgRoles } from "../auth";
import type { Config } from "../config";
import { orgMembers, scimGroupMembers, scimGroups } from "../db/schema";
import type { Deps } from "../http/deps";

/**
 * SCIM groups and org roles (docs/scim.md): a group whose `displayName` is the name of an org role (any case:
 * "admin", "Admin") gives its members that role; other groups are only groups. A member in several such groups has
 * the highest of their roles (admin, then the custom roles of `AUTH_ORG_ROLES` in their order, then member); leaving
 * the last one makes them a member. `owner` is never given or taken by SCIM: an org's owners are managed in the
 * service, so an IdP's group can't seize or strand an organization.
 */

export function groupRole(config: Pick<Config, "orgs">, displayName: string): string | null {
  const wanted = displayName.trim().toLowerCase();
  return orgRoles(config).find((role) => role !== "owner" && role.toLowerCase() === wanted) ?? null;
}

/** Higher is stronger: admin, then custom roles in their configured order, then member. */
function rank(config: Pick<Config, "orgs">, role: string): number {
  if (role === "admin") return 1_000;
  if (role === "member") return 0;
  const custom = orgRoles(config).slice(3);
  return 500 - custom.indexOf(role);
}

/**
 * Sets each user's role from the role-giving groups it is in (owners are left alone; with a setup link's token,
 * `limited`, admins too: that token neither gives nor takes the admin role).
 */
export async function syncRoles(
  deps: Pick<Deps, "db" | "config" | "now">,
  orgId: string,
  userIds: Iterable<string>,
  limited = false,
) {
  for (const userId of new Set(userIds)) {
    const roles = await deps.db
      .select({ role: scimGroups.role })
      .from(scimGroupMembers)
      .innerJoin(scimGroups, eq(scimGroups.id, scimGroupMembers.groupId))
      .where(
        and(eq(scimGroupMembers.userId, userId), eq(scimGroups.orgId, orgId), isNotNull(scimGroups.role)),
      )
      .all();
    const best = roles
      .map((row) => row.role!)
      .reduce((top, role) => (rank(deps.config, role) > rank(deps.config, top) ? role : top), "member");
    await deps.db
      .update(orgMembers)
      .set({ role: best, updatedAt: deps.now() })
      .where(
        and(
          eq(orgMembers.orgId, orgId),
          eq(orgMembers.userId, userId),
          ne(orgMembers.role, "owner"),
          limited ? ne(orgMembers.role, "admin") : undefined,
          ne(orgMembers.role, best),
        ),
      )
      .run();
  }
}
