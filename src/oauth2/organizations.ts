import { and, asc, eq, inArray } from "drizzle-orm";
import { type ActiveMembership, activeMembership } from "../auth";
import { oauth2Grants, organizations, orgMembers } from "../db/schema";
import type { Deps } from "../http/deps";
import { shardOfGrant } from "./grants";

/**
 * The organization a client may act in (contract organizations.md §1): the person picks it on the consent page among
 * their active memberships; it goes on the code, then the grant, and every access token of the grant carries it as
 * `org_id` while the membership stands (docs/oauth2.md, "Organizations").
 */

/** The authorization request's parameter naming the organization to preselect: an org id or slug. */
export const ORGANIZATION_PARAM = "organization";

/** A person in many organizations sees the first of them by name; the console and API list the rest. */
const MAX_LISTED = 100;

export interface MemberOrganization {
  id: string;
  name: string;
  slug: string;
  role: string;
}

/** Whether the user is an active member of at least one of `orgIds` (one query, whatever their number). */
export async function activeInAnyOrg(
  deps: Pick<Deps, "db">,
  userId: string,
  orgIds: string[],
): Promise<boolean> {
  const row = await deps.db
    .select({ orgId: orgMembers.orgId })
    .from(orgMembers)
    .where(and(eq(orgMembers.userId, userId), eq(orgMembers.active, true), inArray(orgMembers.orgId, orgIds)))
    .limit(1)
    .get();
  return row !== undefined;
}

/** The organizations the user is an active member of, by name: what the consent page offers. */
export function memberOrganizations(deps: Pick<Deps, "db">, userId: string): Promise<MemberOrganization[]> {
  return deps.db
    .select({
      id: organizations.id,
      name: organizations.name,
      slug: organizations.slug,
      role: orgMembers.role,
    })
    .from(orgMembers)
    .innerJoin(organizations, eq(organizations.id, orgMembers.orgId))
    .where(and(eq(orgMembers.userId, userId), eq(orgMembers.active, true)))
    .orderBy(asc(organizations.name), asc(organizations.id))
    .limit(MAX_LISTED)
    .all();
}

/**
 * The organization the request names (`organization`: an id or a slug), when the user is an active member of it;
 * undefined otherwise (then nothing is preselected: a client can't learn whether an org exists through this).
 */
export async function namedOrganization(
  deps: Pick<Deps, "db">,
  userId: string,
  hint: string | undefined,
): Promise<ActiveMembership | undefined> {
  if (!hint) return undefined;
  // An id first: a slug may be shaped like another org's id, and must never stand for it.
  const org =
    (await deps.db
      .select({ id: organizations.id })
      .from(organizations)
      .where(eq(organizations.id, hint))
      .get()) ??
    (await deps.db
      .select({ id: organizations.id })
      .from(organizations)
      .where(eq(organizations.slug, hint.toLowerCase()))
      .get());
  return org ? activeMembership(deps, org.id, userId) : undefined;
}

/**
 * What a grant's tokens carry of its organization: the membership while it is active. A member removed (or
 * deactivated by SCIM, or the org deleted) gets tokens without the org from the next refresh on, as sessions do; the
 * grant forgets the org then (after the answer), so a later re-admission does not bring an old consent back.
 */
export async function grantOrganization(
  deps: Deps,
  grant: { id: string; orgId?: string | null },
  userId: string,
): Promise<ActiveMembership | undefined> {
  if (!grant.orgId) return undefined;
  const membership = await activeMembership(deps, grant.orgId, userId);
  if (!membership) {
    const db = shardOfGrant(deps.shards, grant.id);
    // Conditional on the org it had: a concurrent change is not undone.
    if (db) {
      deps.background(
        db
          .update(oauth2Grants)
          .set({ orgId: null })
          .where(and(eq(oauth2Grants.id, grant.id), eq(oauth2Grants.orgId, grant.orgId)))
          .run(),
      );
    }
  }
  return membership;
}

/** The Hasura claims of an organization, as a session switched into it carries them (contract organizations.md §1). */
export function orgHasuraClaims(membership: ActiveMembership): Record<string, string> {
  return { "x-hasura-org-id": membership.orgId, "x-hasura-org-role": membership.role };
}
