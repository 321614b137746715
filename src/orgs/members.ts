import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { type ActiveMembership, activeMembership, orgRoles, revokeSession } from "../auth";
import { isUniqueViolation } from "../db/errors";
import { type OrgMemberRow, orgMembers, sessions, users } from "../db/schema";
import { eachShard, slotOfUser } from "../db/shards";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { type Page, pastCursor, toPage } from "../http/paging";
import type { PageRequest } from "./organizations";
import { toWireMember, type WireMember } from "./wire";

/**
 * Memberships (contract organizations.md §1): who belongs to an organization with which role, and the rules every
 * route applies before it acts: a caller who is no active member learns nothing (404, as if the org did not
 * exist), a member whose role does not allow the action gets 403, and an organization always keeps an owner.
 */

/** Who may manage an organization's members, invitations and settings. */
export const MANAGERS: readonly string[] = ["owner", "admin"];
export const OWNERS: readonly string[] = ["owner"];

/**
 * The caller's active membership of `orgId`, or 404 `not-found` when there is none (no org, no membership, or one
 * SCIM deactivated: an outsider can't tell an org exists); 403 `insufficient-org-role` when `roles` is given and the
 * member's role is not among them.
 */
export async function requireOrgRole(
  deps: Pick<Deps, "db">,
  orgId: string,
  userId: string,
  roles?: readonly string[],
): Promise<ActiveMembership> {
  const membership = await activeMembership(deps, orgId, userId);
  if (!membership) throw new AppError("not-found", "no such organization");
  if (roles && !roles.includes(membership.role)) throw new AppError("insufficient-org-role");
  return membership;
}

/** 400 unless `role` is one of the deployment's org roles (`owner`, `admin`, `member`, `AUTH_ORG_ROLES`). */
export function checkRole(deps: Pick<Deps, "config">, role: string): void {
  const roles = orgRoles(deps.config);
  if (!roles.includes(role))
    throw new AppError("invalid-request", `role: must be one of ${roles.join(", ")}`);
}

export interface NewMember {
  orgId: string;
  userId: string;
  role: string;
  /** How the membership began: `creator`, `invitation`, `admin`, `scim`, `jit`. */
  source: string;
  /** The org created the user (SCIM, or just-in-time inside its verified domains): it may also delete it. */
  provisioned?: boolean;
  /** SCIM's `externalId`. */
  externalId?: string | null;
}

/**
 * Adds a member. `added: false` when the user already was one: the existing row is answered unchanged (a second
 * invitation, a JIT sign-in of a member, must never demote an owner). The role is checked against the configuration.
 */
export async function addMember(
  deps: Pick<Deps, "db" | "now" | "config">,
  member: NewMember,
): Promise<{ added: boolean; member: OrgMemberRow }> {
  checkRole(deps, member.role);
  const now = deps.now();
  let inserted: OrgMemberRow | undefined;
  try {
    inserted = await deps.db
      .insert(orgMembers)
      .values({
        orgId: member.orgId,
        userId: member.userId,
        userSlot: slotOfUser(member.userId),
        role: member.role,
        source: member.source,
        provisioned: member.provisioned ?? false,
        externalId: member.externalId ?? null,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing({ target: [orgMembers.orgId, orgMembers.userId] })
      .returning()
      .get();
  } catch (error) {
    // The org's unique (org_id, external_id): another member has that externalId.
    if (isUniqueViolation(error))
      throw new AppError("invalid-request", "externalId: already in use in this org");
    if (/FOREIGN KEY constraint failed/.test(String((error as Error)?.cause ?? error)))
      throw new AppError("not-found", "no such organization");
    throw error;
  }
  if (inserted) return { added: true, member: inserted };
  const existing = await findMember(deps, member.orgId, member.userId);
  if (!existing) throw new AppError("not-found", "no such organization");
  return { added: false, member: existing };
}

/** The membership row, active or not. */
export async function findMember(
  deps: Pick<Deps, "db">,
  orgId: string,
  userId: string,
): Promise<OrgMemberRow | undefined> {
  return deps.db
    .select()
    .from(orgMembers)
    .where(and(eq(orgMembers.orgId, orgId), eq(orgMembers.userId, userId)))
    .get();
}

/**
 * The condition that keeps an owner: the row is not an active owner, or another active owner remains. Checked inside
 * the one statement that changes the row, so two owners demoting each other at once can't leave none.
 */
const keepsAnOwner = (orgId: string, userId: string) =>
  sql`(${orgMembers.role} <> 'owner' OR ${orgMembers.active} = 0 OR EXISTS (SELECT 1 FROM org_members o WHERE o.org_id = ${orgId} AND o.user_id <> ${userId} AND o.role = 'owner' AND o.active = 1))`;

/** Sets a member's role; 404 `not-found` for no such member, 409 `last-owner` when it would leave no owner. */
export async function setMemberRole(
  deps: Pick<Deps, "db" | "now" | "config">,
  orgId: string,
  userId: string,
  role: string,
): Promise<OrgMemberRow> {
  checkRole(deps, role);
  const where = and(eq(orgMembers.orgId, orgId), eq(orgMembers.userId, userId));
  const row = await deps.db
    .update(orgMembers)
    .set({ role, updatedAt: deps.now() })
    .where(role === "owner" ? where : and(where, keepsAnOwner(orgId, userId)))
    .returning()
    .get();
  if (row) return row;
  if (await findMember(deps, orgId, userId)) throw new AppError("last-owner");
  throw new AppError("not-found", "no such member");
}

/**
 * Removes a member (its sessions switched into the org lose it at their next refresh). 404 for no such member,
 * 409 `last-owner` for the last owner.
 */
export async function removeMember(deps: Pick<Deps, "db">, orgId: string, userId: string): Promise<void> {
  const gone = await deps.db
    .delete(orgMembers)
    .where(and(eq(orgMembers.orgId, orgId), eq(orgMembers.userId, userId), keepsAnOwner(orgId, userId)))
    .returning({ userId: orgMembers.userId })
    .get();
  if (gone) return;
  if (await findMember(deps, orgId, userId)) throw new AppError("last-owner");
  throw new AppError("not-found", "no such member");
}

/**
 * Ends at once the user's sessions switched into `orgId` (SCIM's deactivation, contract §3): their rows go and
 * their families are revoked, so none refreshes again. Other sessions of the user stay.
 */
export async function revokeOrgSessions(deps: Deps, orgId: string, userId: string): Promise<number> {
  const rows = await deps.shards
    .ofUser(userId)
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(eq(sessions.userId, userId), eq(sessions.orgId, orgId)))
    .all();
  for (const row of rows) await revokeSession(deps, row.id);
  return rows.length;
}

/** The organization's members, oldest first, each with its user's email and display name (read in its shard). */
export async function listMembers(
  deps: Pick<Deps, "db" | "shards">,
  orgId: string,
  page: PageRequest,
): Promise<Page<WireMember>> {
  const rows = await deps.db
    .select()
    .from(orgMembers)
    .where(
      and(
        eq(orgMembers.orgId, orgId),
        pastCursor(page.cursor, orgMembers.createdAt, orgMembers.userId, "asc"),
      ),
    )
    .orderBy(asc(orgMembers.createdAt), asc(orgMembers.userId))
    .limit(page.limit + 1)
    .all();
  const shown = rows.slice(0, page.limit);
  const profiles = await profilesOf(
    deps,
    shown.map((row) => row.userId),
  );
  return toPage(
    rows,
    page.limit,
    (row) => [row.createdAt, row.userId],
    (row) => toWireMember(row, profiles.get(row.userId)),
  );
}

/** Email and display name of users spread over the shards: `IN` queries in the shards that hold any of them. */
async function profilesOf(
  deps: Pick<Deps, "shards">,
  userIds: string[],
): Promise<Map<string, { email: string | null; displayName: string }>> {
  const byShard = new Map<number, string[]>();
  for (const id of userIds) {
    const index = deps.shards.indexOfUser(id);
    byShard.set(index, [...(byShard.get(index) ?? []), id]);
  }
  const found = await eachShard(deps.shards, async (db, index) => {
    const ids = byShard.get(index) ?? [];
    const rows = [];
    // D1 binds at most 100 values per statement.
    for (let start = 0; start < ids.length; start += 90) {
      rows.push(
        ...(await db
          .select({ id: users.id, email: users.email, displayName: users.displayName })
          .from(users)
          .where(inArray(users.id, ids.slice(start, start + 90)))
          .all()),
      );
    }
    return rows;
  });
  return new Map(found.flat().map((user) => [user.id, user]));
}
