import { and, asc, count, eq, inArray, sql } from "drizzle-orm";
import { z } from "zod";
import { isUniqueViolation } from "../db/errors";
import { orgMembers, type ScimGroupRow, scimGroupMembers, scimGroups } from "../db/schema";
import type { Deps } from "../http/deps";
import { randomUuid } from "../lib/crypto";
import { ScimError } from "./errors";
import { type FilterSpec, lookups, matches, parseFilter } from "./filters";
import { type ListQuery, listResponse } from "./list-query";
import { applyPatch, type PatchRequest } from "./patch";
import { groupRole, syncRoles } from "./roles";
import { GROUP_SCHEMA } from "./schemas";
import { userLocation } from "./user-resource";

/**
 * SCIM Groups of one organization (RFC 7643 §4.2): a name, the org's users in it, and the org role the name may give
 * (src/scim/roles.ts). Members must be users of the same organization.
 */

export const GROUP_FILTER: FilterSpec = {
  indexed: ["id", "displayname", "externalid"],
  tested: ["members.value"],
  caseExact: ["id", "externalid", "members.value"],
};

/** The most members one request may set; an IdP sends larger groups in several PATCHes. */
const MAX_MEMBERS_PER_REQUEST = 1_000;

const groupInputSchema = z.looseObject({
  schemas: z.array(z.string()).optional(),
  displayName: z.string().trim().min(1).max(256),
  externalId: z.string().max(255).nullish(),
  members: z
    .array(z.looseObject({ value: z.string().min(1).max(100) }))
    .max(MAX_MEMBERS_PER_REQUEST)
    .nullish(),
});
type GroupInput = z.infer<typeof groupInputSchema>;

function parseGroupInput(body: unknown): GroupInput {
  const result = groupInputSchema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw new ScimError(400, `${issue.path.map(String).join(".") || "body"}: ${issue.message}`, "invalidValue");
}

const notFound = () => new ScimError(404, "no such group in this organization");

function toScimGroup(serverUrl: string, row: ScimGroupRow, members: string[] | null) {
  return {
    schemas: [GROUP_SCHEMA],
    id: row.id,
    displayName: row.displayName,
    ...(row.externalId !== null ? { externalId: row.externalId } : {}),
    ...(members
      ? { members: members.map((id) => ({ value: id, $ref: userLocation(serverUrl, id), type: "User" })) }
      : {}),
    meta: {
      resourceType: "Group",
      created: new Date(row.createdAt).toISOString(),
      lastModified: new Date(row.updatedAt).toISOString(),
      location: `${serverUrl}/scim/v2/Groups/${row.id}`,
      version: `W/"${row.updatedAt}"`,
    },
  };
}

async function groupRow(deps: Pick<Deps, "db">, orgId: string, id: string): Promise<ScimGroupRow> {
  const row = await deps.db
    .select()
    .from(scimGroups)
    .where(and(eq(scimGroups.id, id), eq(scimGroups.orgId, orgId)))
    .get();
  if (!row) throw notFound();
  return row;
}

async function membersOf(deps: Pick<Deps, "db">, groupIds: string[]): Promise<Map<string, string[]>> {
  const byGroup = new Map<string, string[]>(groupIds.map((id) => [id, []]));
  if (groupIds.length === 0) return byGroup;
  const rows = await deps.db
    .select()
    .from(scimGroupMembers)
    .where(inArray(scimGroupMembers.groupId, groupIds))
    .orderBy(asc(scimGroupMembers.userId))
    .all();
  for (const row of rows) byGroup.get(row.groupId)?.push(row.userId);
  return byGroup;
}

/** 400 unless every id is a user of this organization: a group can't pull in another org's users. */
async function checkMembers(deps: Pick<Deps, "db">, orgId: string, userIds: string[]): Promise<void> {
  const known = new Set<string>();
  for (let start = 0; start < userIds.length; start += 90) {
    const rows = await deps.db
      .select({ userId: orgMembers.userId })
      .from(orgMembers)
      .where(and(eq(orgMembers.orgId, orgId), inArray(orgMembers.userId, userIds.slice(start, start + 90))))
      .all();
    for (const row of rows) known.add(row.userId);
  }
  const stranger = userIds.find((id) => !known.has(id));
  if (stranger)
    throw new ScimError(
      400,
      `members: "${stranger.slice(0, 100)}" is not a user of this organization`,
      "invalidValue",
    );
}

const uniqueness = (error: unknown) =>
  isUniqueViolation(error)
    ? new ScimError(409, "displayName: another group of this organization has it", "uniqueness")
    : error;

/** Sets a group's members to `wanted`; the users whose membership changed. */
async function setMembers(deps: Pick<Deps, "db">, groupId: string, current: string[], wanted: string[]) {
  const added = wanted.filter((id) => !current.includes(id));
  const removed = current.filter((id) => !wanted.includes(id));
  for (let start = 0; start < added.length; start += 45) {
    const values = added.slice(start, start + 45).map((userId) => ({ groupId, userId }));
    await deps.db.insert(scimGroupMembers).values(values).onConflictDoNothing().run();
  }
  for (let start = 0; start < removed.length; start += 90) {
    await deps.db
      .delete(scimGroupMembers)
      .where(
        and(
          eq(scimGroupMembers.groupId, groupId),
          inArray(scimGroupMembers.userId, removed.slice(start, start + 90)),
        ),
      )
      .run();
  }
  return [...added, ...removed];
}

/**
 * A token a setup link made neither gives nor takes the `admin` role (operators.md §5; `owner` no SCIM token gives):
 * it may not name a group after it, change who is in a group that gives it, or delete such a group (403 in SCIM's
 * body); and a group of another role leaves the admins in it admins (`syncRoles`).
 */
function refuseAdminGrant(limited: boolean, ...roles: (string | null)[]) {
  if (limited && roles.some((role) => role === "admin" || role === "owner")) {
    throw new ScimError(
      403,
      "this SCIM token was made through a setup link: it can't give or take the admin role",
    );
  }
}

export async function createScimGroup(deps: Deps, orgId: string, body: unknown, limited = false) {
  const input = parseGroupInput(body);
  refuseAdminGrant(limited, groupRole(deps.config, input.displayName));
  const members = [...new Set((input.members ?? []).map((member) => member.value))];
  await checkMembers(deps, orgId, members);
  const now = deps.now();
  let row: ScimGroupRow;
  try {
    row = (await deps.db
      .insert(scimGroups)
      .values({
        id: randomUuid(),
        orgId,
        displayName: input.displayName,
        externalId: input.externalId ?? null,
        role: groupRole(deps.config, input.displayName),
        createdAt: now,
        updatedAt: now,
      })
      .returning()
      .get())!;
  } catch (error) {
    throw uniqueness(error);
  }
  await setMembers(deps, row.id, [], members);
  if (row.role) await syncRoles(deps, orgId, members, limited);
  return toScimGroup(deps.config.urls.server, row, members);
}

export async function getScimGroup(deps: Deps, orgId: string, id: string, withMembers = true) {
  const row = await groupRow(deps, orgId, id);
  const members = withMembers ? ((await membersOf(deps, [id])).get(id) ?? []) : null;
  return toScimGroup(deps.config.urls.server, row, members);
}

/** Stores a group as a PUT (or a PATCH's result) states it; members' roles follow the group's. */
async function store(
  deps: Deps,
  orgId: string,
  row: ScimGroupRow,
  current: string[],
  input: GroupInput,
  limited: boolean,
) {
  const wanted = [...new Set((input.members ?? []).map((member) => member.value))];
  await checkMembers(
    deps,
    orgId,
    wanted.filter((id) => !current.includes(id)),
  );
  const role = groupRole(deps.config, input.displayName);
  refuseAdminGrant(limited, role, row.role);
  let updated: ScimGroupRow | undefined;
  try {
    updated = await deps.db
      .update(scimGroups)
      .set({
        displayName: input.displayName,
        externalId: input.externalId ?? null,
        role,
        updatedAt: deps.now(),
      })
      .where(and(eq(scimGroups.id, row.id), eq(scimGroups.orgId, orgId)))
      .returning()
      .get();
  } catch (error) {
    throw uniqueness(error);
  }
  if (!updated) throw notFound();
  const changed = await setMembers(deps, row.id, current, wanted);
  if (role !== row.role) await syncRoles(deps, orgId, [...current, ...wanted], limited);
  else if (role) await syncRoles(deps, orgId, changed, limited);
  return toScimGroup(deps.config.urls.server, updated, wanted);
}

export async function replaceScimGroup(
  deps: Deps,
  orgId: string,
  id: string,
  body: unknown,
  limited = false,
) {
  const row = await groupRow(deps, orgId, id);
  const current = (await membersOf(deps, [id])).get(id) ?? [];
  return store(deps, orgId, row, current, parseGroupInput(body), limited);
}

export async function patchScimGroup(
  deps: Deps,
  orgId: string,
  id: string,
  patch: PatchRequest,
  limited = false,
) {
  const row = await groupRow(deps, orgId, id);
  const current = (await membersOf(deps, [id])).get(id) ?? [];
  const resource = toScimGroup(deps.config.urls.server, row, current);
  return store(deps, orgId, row, current, parseGroupInput(applyPatch(resource, patch)), limited);
}

export async function deleteScimGroup(deps: Deps, orgId: string, id: string, limited = false): Promise<void> {
  if (limited) refuseAdminGrant(limited, (await groupRow(deps, orgId, id)).role);
  const members = (await membersOf(deps, [id])).get(id) ?? [];
  const gone = await deps.db
    .delete(scimGroups)
    .where(
      and(
        eq(scimGroups.id, id),
        eq(scimGroups.orgId, orgId),
        // The check above, in the statement too: a group renamed to `admin` meanwhile is not deleted.
        limited ? sql`${scimGroups.role} IS NOT 'admin'` : undefined,
      ),
    )
    .returning()
    .get();
  if (!gone) {
    // Gone meanwhile (404), or made an `admin` group meanwhile (403).
    if (limited) refuseAdminGrant(limited, (await groupRow(deps, orgId, id)).role);
    throw notFound();
  }
  // The cascade removed the memberships (D1 enforces foreign keys); the roles they gave go with them.
  if (gone.role) await syncRoles(deps, orgId, members, limited);
}

export async function listScimGroups(deps: Deps, orgId: string, query: ListQuery) {
  const withMembers = !(query.excludedAttributes ?? []).some((name) => name.toLowerCase() === "members");
  const show = async (rows: ScimGroupRow[], needMembers: boolean) => {
    const members = needMembers
      ? await membersOf(
          deps,
          rows.map((row) => row.id),
        )
      : null;
    return rows.map((row) => toScimGroup(deps.config.urls.server, row, members?.get(row.id) ?? null));
  };
  if (query.filter !== undefined) {
    const terms = parseFilter(query.filter, GROUP_FILTER);
    const conditions = [eq(scimGroups.orgId, orgId)];
    for (const id of lookups(terms, "id")) conditions.push(eq(scimGroups.id, id));
    for (const externalId of lookups(terms, "externalid"))
      conditions.push(eq(scimGroups.externalId, externalId));
    // displayName is case-insensitive (RFC 7643 §4.2); the org's groups are few enough to compare lower-cased.
    for (const name of lookups(terms, "displayname"))
      conditions.push(sql`lower(${scimGroups.displayName}) = ${name.toLowerCase()}`);
    const rows = await deps.db
      .select()
      .from(scimGroups)
      .where(and(...conditions))
      .orderBy(asc(scimGroups.createdAt))
      .limit(100)
      .all();
    const hits = (await show(rows, true)).filter((group) => matches(group, terms, GROUP_FILTER));
    const shown = hits.slice(query.startIndex - 1, query.startIndex - 1 + query.count);
    return listResponse(shown, hits.length, query);
  }
  const total = await deps.db
    .select({ n: count() })
    .from(scimGroups)
    .where(eq(scimGroups.orgId, orgId))
    .get();
  const rows =
    query.count === 0
      ? []
      : await deps.db
          .select()
          .from(scimGroups)
          .where(eq(scimGroups.orgId, orgId))
          .orderBy(asc(scimGroups.createdAt), asc(scimGroups.id))
          .limit(query.count)
          .offset(query.startIndex - 1)
          .all();
  return listResponse(await show(rows, withMembers), total?.n ?? 0, query);
}
