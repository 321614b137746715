import { and, asc, count, eq, inArray, notInArray, or, sql } from "drizzle-orm";
import {
  conformingDisplayName,
  createUser,
  findUserByEmail,
  proveEmail,
  removeUser,
  resolveSignUpOptions,
} from "../auth";
import { isUniqueViolation } from "../db/errors";
import { type OrgMemberRow, orgMembers, scimGroupMembers, scimGroups } from "../db/schema";
import { slotOfUser } from "../db/shards";
import type { Deps } from "../http/deps";
import { revokeOrgSessions } from "../orgs";
import { inVerifiedDomain, setDisplayName, usersByIds } from "./directory";
import { ScimError } from "./errors";
import { type FilterSpec, lookups, matches, parseFilter } from "./filters";
import { type ListQuery, listResponse } from "./list-query";
import { applyPatch, type PatchRequest } from "./patch";
import {
  displayNameOf,
  emailOf,
  parseUserInput,
  storedAttributes,
  toScimUser,
  type UserFacts,
  type UserInput,
} from "./user-resource";

/**
 * SCIM Users of one organization (contract organizations.md §3): a User is a service user and its membership of the
 * org. The org's token reaches only its own members: every read and write names `orgId`.
 */

export const USER_FILTER: FilterSpec = {
  indexed: ["id", "username", "externalid", "emails.value"],
  tested: ["active", "emails.type", "emails.primary", "displayname"],
  caseExact: ["id", "externalid"],
};

const notFound = () => new ScimError(404, "no such user in this organization");
const lastOwner = () =>
  new ScimError(409, "the organization's last owner can't be deactivated or removed by SCIM", "mutability");

/**
 * The condition that keeps an owner: the row is not an active owner, or another active owner remains (checked inside
 * the statement that changes the row, so two changes at once can't leave the org without one).
 */
const keepsAnOwner = (orgId: string, userId: string) =>
  sql`(${orgMembers.role} <> 'owner' OR ${orgMembers.active} = 0 OR EXISTS (SELECT 1 FROM org_members o WHERE o.org_id = ${orgId} AND o.user_id <> ${userId} AND o.role = 'owner' AND o.active = 1))`;

const ofMember = (orgId: string, userId: string) =>
  and(eq(orgMembers.orgId, orgId), eq(orgMembers.userId, userId));

async function memberOf(deps: Pick<Deps, "db">, orgId: string, userId: string) {
  return deps.db.select().from(orgMembers).where(ofMember(orgId, userId)).get();
}

/**
 * A setup link's token (`limited`) leaves the org's owners and admins as they are (operators.md §5): it does not
 * suspend, restore or remove them. Their names and attributes it may still update, as the IdP sends them.
 */
const PRIVILEGED = ["owner", "admin"];
const notPrivileged = notInArray(orgMembers.role, PRIVILEGED);

function refuseOnPrivileged(role: string) {
  if (PRIVILEGED.includes(role)) {
    throw new ScimError(
      403,
      "this SCIM token was made through a setup link: it can't suspend, restore or remove an owner or an admin",
    );
  }
}

/** Why a conditional write of a membership found no row: none, a privileged one (limited token), the last owner. */
async function whyUnchanged(deps: Deps, orgId: string, userId: string, limited: boolean) {
  const member = await memberOf(deps, orgId, userId);
  if (!member) return notFound();
  if (limited) refuseOnPrivileged(member.role);
  return lastOwner();
}

async function loaded(
  deps: Deps,
  orgId: string,
  userId: string,
): Promise<{ member: OrgMemberRow; user: UserFacts }> {
  const member = await memberOf(deps, orgId, userId);
  const user = member ? (await usersByIds(deps, [userId])).get(userId) : undefined;
  if (!member || !user) throw notFound();
  return { member, user };
}

async function groupsOf(deps: Pick<Deps, "db">, orgId: string, userId: string) {
  return deps.db
    .select({ id: scimGroups.id, displayName: scimGroups.displayName })
    .from(scimGroupMembers)
    .innerJoin(scimGroups, eq(scimGroups.id, scimGroupMembers.groupId))
    .where(and(eq(scimGroupMembers.userId, userId), eq(scimGroups.orgId, orgId)))
    .all();
}

export async function getScimUser(deps: Deps, orgId: string, userId: string) {
  const { member, user } = await loaded(deps, orgId, userId);
  return toScimUser(deps.config.urls.server, member, user, await groupsOf(deps, orgId, userId));
}

function uniquenessOf(error: unknown): ScimError | undefined {
  return isUniqueViolation(error)
    ? new ScimError(409, "externalId: another user of this organization has it", "uniqueness")
    : undefined;
}

/**
 * Creates a User: only for an email inside one of the org's verified domains. An existing user with that email
 * becomes a member (the org did not create it, so it will never delete it); otherwise the user is created, with its
 * email verified (the org proved it owns the domain), and the membership records that the org provisioned it.
 * An existing account whose address was never proven is proven by the org's word as by its IdP's at an SSO sign-in
 * (src/sso/jit.ts): whatever was set up on it before is wiped first (`proveEmail`), or whoever squatted the new
 * hire's address unproven would be the member, with the sessions they already hold.
 */
export async function createScimUser(deps: Deps, orgId: string, body: unknown) {
  const input = parseUserInput(body);
  const email = emailOf(input);
  if (!(await inVerifiedDomain(deps, orgId, email))) {
    throw new ScimError(400, "userName: not in one of the organization's verified domains", "invalidValue");
  }
  const displayName = conformingDisplayName(displayNameOf(input) ?? "");
  let user = await findUserByEmail(deps.shards, email);
  let provisioned = false;
  if (user && !user.emailVerified) user = await proveEmail(deps, user, "inbox");
  if (!user) {
    const options = resolveSignUpOptions(deps.config, undefined, displayName || email);
    user = await createUser(deps, {
      admission: "operator",
      method: null,
      email,
      emailVerified: true,
      options,
    });
    provisioned = user !== undefined;
    user ??= await findUserByEmail(deps.shards, email); // lost a race with another creation of that address
    if (!user)
      throw new ScimError(409, "userName: this user is being created by another request", "uniqueness");
  }
  const now = deps.now();
  let member: OrgMemberRow | undefined;
  try {
    member = await deps.db
      .insert(orgMembers)
      .values({
        orgId,
        userId: user.id,
        userSlot: slotOfUser(user.id),
        role: "member",
        source: "scim",
        provisioned,
        active: input.active ?? true,
        externalId: input.externalId ?? null,
        scimAttributes: storedAttributes(input),
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing({ target: [orgMembers.orgId, orgMembers.userId] })
      .returning()
      .get();
  } catch (error) {
    if (provisioned) await removeUser(deps, user.id);
    throw uniquenessOf(error) ?? error;
  }
  if (!member) throw new ScimError(409, "userName: already a user of this organization", "uniqueness");
  return toScimUser(deps.config.urls.server, member, user);
}

/**
 * Stores a User as a PUT states it (a PATCH's result too). `userName` can't change (the user's email is theirs to
 * change, through the service). `active: false` suspends the membership and ends its sessions in the org at once;
 * `active: true` restores it.
 */
async function store(
  deps: Deps,
  orgId: string,
  current: { member: OrgMemberRow; user: UserFacts },
  input: UserInput,
  limited: boolean,
) {
  const userId = current.user.id;
  if (emailOf(input) !== current.user.email?.toLowerCase()) {
    throw new ScimError(400, "userName: the user's email can't be changed through SCIM", "mutability");
  }
  const active = input.active ?? true;
  if (limited && active !== current.member.active) refuseOnPrivileged(current.member.role);
  let member: OrgMemberRow | undefined;
  try {
    member = await deps.db
      .update(orgMembers)
      .set({
        active,
        externalId: input.externalId ?? null,
        scimAttributes: storedAttributes(input),
        updatedAt: deps.now(),
      })
      .where(
        and(
          ofMember(orgId, userId),
          active ? undefined : keepsAnOwner(orgId, userId),
          // The check above, in the statement too: a member made an admin meanwhile keeps their state.
          limited ? or(notPrivileged, eq(orgMembers.active, active)) : undefined,
        ),
      )
      .returning()
      .get();
  } catch (error) {
    throw uniquenessOf(error) ?? error;
  }
  if (!member) throw await whyUnchanged(deps, orgId, userId, limited);
  if (!active) await revokeOrgSessions(deps, orgId, userId);
  const displayName = conformingDisplayName(displayNameOf(input) ?? "");
  if (member.provisioned && displayName) await setDisplayName(deps, userId, displayName);
  return getScimUser(deps, orgId, userId);
}

export async function replaceScimUser(
  deps: Deps,
  orgId: string,
  userId: string,
  body: unknown,
  limited = false,
) {
  const current = await loaded(deps, orgId, userId);
  return store(deps, orgId, current, parseUserInput(body), limited);
}

export async function patchScimUser(
  deps: Deps,
  orgId: string,
  userId: string,
  patch: PatchRequest,
  limited = false,
) {
  const current = await loaded(deps, orgId, userId);
  const resource = toScimUser(deps.config.urls.server, current.member, current.user);
  return store(deps, orgId, current, parseUserInput(applyPatch(resource, patch)), limited);
}

/**
 * Removes the user from the organization (its groups there too) and ends its sessions in it at once; the user itself
 * goes only when this org created it and it belongs to no other organization.
 */
export async function deleteScimUser(
  deps: Deps,
  orgId: string,
  userId: string,
  limited = false,
): Promise<void> {
  const gone = await deps.db
    .delete(orgMembers)
    .where(and(ofMember(orgId, userId), keepsAnOwner(orgId, userId), limited ? notPrivileged : undefined))
    .returning()
    .get();
  if (!gone) throw await whyUnchanged(deps, orgId, userId, limited);
  await deps.db
    .delete(scimGroupMembers)
    .where(
      and(
        eq(scimGroupMembers.userId, userId),
        inArray(
          scimGroupMembers.groupId,
          deps.db.select({ id: scimGroups.id }).from(scimGroups).where(eq(scimGroups.orgId, orgId)),
        ),
      ),
    )
    .run();
  await revokeOrgSessions(deps, orgId, userId);
  if (!gone.provisioned) return;
  const elsewhere = await deps.db
    .select({ orgId: orgMembers.orgId })
    .from(orgMembers)
    .where(eq(orgMembers.userId, userId))
    .limit(1)
    .get();
  if (!elsewhere) await removeUser(deps, userId);
}

/** The user ids an indexed filter term names (intersected: every term must hold). */
async function candidates(
  deps: Deps,
  orgId: string,
  terms: ReturnType<typeof parseFilter>,
): Promise<string[]> {
  const sets: string[][] = [];
  const ids = lookups(terms, "id");
  if (ids.length) sets.push(ids);
  for (const email of [...lookups(terms, "username"), ...lookups(terms, "emails.value")]) {
    const user = await findUserByEmail(deps.shards, email);
    sets.push(user ? [user.id] : []);
  }
  for (const externalId of lookups(terms, "externalid")) {
    const row = await deps.db
      .select({ userId: orgMembers.userId })
      .from(orgMembers)
      .where(and(eq(orgMembers.orgId, orgId), eq(orgMembers.externalId, externalId)))
      .get();
    sets.push(row ? [row.userId] : []);
  }
  // Only terms whose value is not a string (`userName eq true`): no user's attribute is one, so none matches.
  if (sets.length === 0) return [];
  return sets.reduce((kept, set) => kept.filter((id) => set.includes(id)));
}

async function resources(deps: Deps, rows: OrgMemberRow[]) {
  const found = await usersByIds(
    deps,
    rows.map((row) => row.userId),
  );
  return rows.flatMap((row) => {
    const user = found.get(row.userId);
    return user ? [toScimUser(deps.config.urls.server, row, user)] : [];
  });
}

/** `GET /Users`: a page of the org's users, oldest first, or those a filter names. */
export async function listScimUsers(deps: Deps, orgId: string, query: ListQuery) {
  if (query.filter !== undefined) {
    const terms = parseFilter(query.filter, USER_FILTER);
    const ids = (await candidates(deps, orgId, terms)).slice(0, 100);
    const rows = ids.length
      ? await deps.db
          .select()
          .from(orgMembers)
          .where(and(eq(orgMembers.orgId, orgId), inArray(orgMembers.userId, ids)))
          .all()
      : [];
    const hits = (await resources(deps, rows)).filter((resource) => matches(resource, terms, USER_FILTER));
    return listResponse(
      hits.slice(query.startIndex - 1, query.startIndex - 1 + query.count),
      hits.length,
      query,
    );
  }
  const total = await deps.db
    .select({ n: count() })
    .from(orgMembers)
    .where(eq(orgMembers.orgId, orgId))
    .get();
  const rows =
    query.count === 0
      ? []
      : await deps.db
          .select()
          .from(orgMembers)
          .where(eq(orgMembers.orgId, orgId))
          .orderBy(asc(orgMembers.createdAt), asc(orgMembers.userId))
          .limit(query.count)
          .offset(query.startIndex - 1)
          .all();
  return listResponse(await resources(deps, rows), total?.n ?? 0, query);
}
