import { and, eq, sql } from "drizzle-orm";
import { accountOfEmail } from "../auth";
import { orgMembers, type SsoConnectionRow, type UserRow, users } from "../db/schema";
import { slotOfUser } from "../db/shards";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";

/**
 * An enterprise sign-in's account and membership, read side by side (issue 48, "Round trips"; ./jit.ts decides with
 * them), and the membership the connection keeps, written beside the session (./finish.ts).
 */

/** A membership as the sign-in reads it before deciding anything. */
export interface MemberState {
  role: string;
  /** How it began: only a membership the connection made (`jit`) follows the IdP's groups. */
  source: string;
  /** SCIM's `active: false` suspends it: the sign-in is refused. */
  active: boolean;
}

export const suspended = () => new AppError("forbidden", "your membership of this organization is suspended");

/** The membership of `userId` in the org: one primary-key read in the home database, where organizations live. */
export function memberState(
  deps: Pick<Deps, "db">,
  orgId: string,
  userId: string,
): Promise<MemberState | undefined> {
  return deps.db
    .select({ role: orgMembers.role, source: orgMembers.source, active: orgMembers.active })
    .from(orgMembers)
    .where(and(eq(orgMembers.orgId, orgId), eq(orgMembers.userId, userId)))
    .get();
}

/**
 * The user of `email` and their membership of `orgId`, both read as soon as the user's id is known: at once with a
 * hint (the id the result's take answered, one shard), else after the directory (several shards) or beside the row
 * (one shard: `accountOfEmail` reads it). `started(id)` is called with the id when it is known, before the reads are
 * awaited, so that what the session will need is read beside them. The row must still hold the email: a hint that
 * no longer does (the email changed since) is dropped and the email read as without one.
 */
export async function accountThrough(
  deps: Deps,
  email: string,
  orgId: string,
  hint: string | undefined,
  started: (userId: string) => void,
): Promise<{ user?: UserRow; member?: MemberState }> {
  const account = hint
    ? {
        id: hint,
        user: () =>
          deps.shards
            .ofUser(hint)
            .select()
            .from(users)
            .where(and(eq(users.id, hint), eq(users.email, email)))
            .get(),
      }
    : await accountOfEmail(deps.shards, email);
  if (!account.id) return {};
  started(account.id);
  const member = memberState(deps, orgId, account.id);
  member.catch(() => {});
  const user = await account.user();
  if (user) return { user, member: await member };
  return hint ? accountThrough(deps, email, orgId, undefined, started) : {};
}

/**
 * The role the session carries: the IdP's (`mapped`) for a membership the connection keeps or is about to make; an
 * invitation's, an admin's or SCIM's own role otherwise (theirs to change, not the IdP's). An owner is never the
 * IdP's to change, whoever made the membership (as SCIM's role sync): an owner made by hand and then left alone as
 * the last one was demoted by their next sign-in, leaving the org with nobody to manage it.
 */
export const roleAfterKeep = (member: MemberState | undefined, mapped: string): string =>
  !member || (member.source === "jit" && member.role !== "owner") ? mapped : member.role;

/**
 * The membership this connection keeps: made on the first sign-in (`source: jit`, `provisioned` when the org made
 * the user); on later sign-ins the group-derived role follows the IdP, but only on memberships the connection made.
 * One upsert, answering whether the membership is active: a membership SCIM suspended since the sign-in read it
 * refuses (the caller ends the session it started beside).
 */
export async function keepMembership(
  deps: Deps,
  connection: SsoConnectionRow,
  userId: string,
  role: string,
  provisioned: boolean,
): Promise<void> {
  const now = deps.now();
  // The connection's own memberships, owners aside (`roleAfterKeep`): decided in the upsert, against the row as it is.
  const ours = sql`${orgMembers.source} = 'jit' AND ${orgMembers.role} <> 'owner'`;
  const kept = await deps.db
    .insert(orgMembers)
    .values({
      orgId: connection.orgId,
      userId,
      userSlot: slotOfUser(userId),
      role,
      source: "jit",
      provisioned,
      active: true,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoUpdate({
      target: [orgMembers.orgId, orgMembers.userId],
      set: {
        role: sql`CASE WHEN ${ours} THEN ${role} ELSE ${orgMembers.role} END`,
        updatedAt: sql`CASE WHEN ${ours} THEN ${now} ELSE ${orgMembers.updatedAt} END`,
      },
      setWhere: eq(orgMembers.active, true),
    })
    .returning({ active: orgMembers.active })
    .get();
  if (!kept) throw suspended();
}
