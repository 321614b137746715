import { and, asc, desc, eq, or, type SQL } from "drizzle-orm";
import { contains } from "../db/contains";
import { isUniqueViolation } from "../db/errors";
import { type OrganizationRow, organizations, orgMembers } from "../db/schema";
import { slotOfUser } from "../db/shards";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { type Page, pastCursor, toPage } from "../http/paging";
import { randomUuid } from "../lib/crypto";
import { SLUG_PATTERN, toWireOrg, type WireOrg } from "./wire";

/**
 * Organizations themselves (contract organizations.md §1): create (with the first owner, in one batch), read,
 * change, delete, and the two lists (a user's own, the admin API's all). Rows live in the home database.
 */

type OrgDeps = Pick<Deps, "db" | "now">;

export interface NewOrg {
  name: string;
  slug?: string;
  metadata?: Record<string, unknown>;
}

/** The organization, or undefined. One primary-key read in the home database. */
export async function findOrg(deps: Pick<Deps, "db">, orgId: string): Promise<OrganizationRow | undefined> {
  return deps.db.select().from(organizations).where(eq(organizations.id, orgId)).get();
}

export async function findOrgBySlug(
  deps: Pick<Deps, "db">,
  slug: string,
): Promise<OrganizationRow | undefined> {
  return deps.db.select().from(organizations).where(eq(organizations.slug, slug)).get();
}

/** The organization or 404 `not-found` (the admin API, and members once their role is checked). */
export async function getOrg(deps: Pick<Deps, "db">, orgId: string): Promise<OrganizationRow> {
  const org = await findOrg(deps, orgId);
  if (!org) throw new AppError("not-found", "no such organization");
  return org;
}

/**
 * A slug from a name: accents dropped, lower case, anything else a dash. Empty or too short (a name of symbols or of
 * another script): `org`. The caller adds a random suffix when it is taken.
 */
export function slugFromName(name: string): string {
  const base = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "");
  return SLUG_PATTERN.test(base) ? base : "org";
}

const suffixed = (slug: string) => `${slug}-${randomUuid().slice(0, 6)}`;

/**
 * Creates the organization and its first owner in one batch (D1 runs a batch as one transaction: no org without an
 * owner). A slug the caller chose that is taken: 409 `slug-already-in-use`; a generated one gets a random suffix.
 * The unique index decides, so two creations racing for a slug can't both have it. An import (`source: "import"`)
 * may make an org without an owner under the id it had elsewhere: Supabase's SSO providers have none, and such an
 * org is the operator's to manage, as one whose last owner the admin API removed.
 */
export async function createOrg(
  deps: OrgDeps,
  input: NewOrg,
  ownerUserId: string | null,
  source: "creator" | "admin" | "import" = "creator",
  id: string = randomUuid(),
): Promise<WireOrg> {
  const chosen = input.slug;
  let slug = chosen ?? slugFromName(input.name);
  for (let attempt = 0; ; attempt++) {
    const now = deps.now();
    const row: OrganizationRow = {
      id,
      name: input.name,
      slug,
      metadata: input.metadata ?? {},
      enforceSso: false,
      createdAt: now,
      updatedAt: now,
    };
    try {
      const org = deps.db.insert(organizations).values(row);
      if (ownerUserId === null) await org;
      else
        await deps.db.batch([
          org,
          deps.db.insert(orgMembers).values({
            orgId: row.id,
            userId: ownerUserId,
            userSlot: slotOfUser(ownerUserId),
            role: "owner",
            source,
            createdAt: now,
            updatedAt: now,
          }),
        ]);
      return toWireOrg(row);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      if (chosen || attempt >= 3) throw new AppError("slug-already-in-use");
      slug = suffixed(slugFromName(input.name));
    }
  }
}

/** Changes name, slug or metadata; what the body leaves out stays. A taken slug: 409 `slug-already-in-use`. */
export async function updateOrg(
  deps: OrgDeps,
  orgId: string,
  change: { name?: string; slug?: string; metadata?: Record<string, unknown> },
): Promise<WireOrg> {
  try {
    const row = await deps.db
      .update(organizations)
      .set({ ...change, updatedAt: deps.now() })
      .where(eq(organizations.id, orgId))
      .returning()
      .get();
    if (!row) throw new AppError("not-found", "no such organization");
    return toWireOrg(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError("slug-already-in-use");
    throw error;
  }
}

/**
 * Deletes the organization; its members, invitations, domains, connections and SCIM rows go with it (foreign keys
 * with `ON DELETE CASCADE`). Sessions switched into it lose the org at their next refresh, which finds no membership.
 */
export async function deleteOrg(deps: Pick<Deps, "db">, orgId: string): Promise<void> {
  const gone = await deps.db
    .delete(organizations)
    .where(eq(organizations.id, orgId))
    .returning({ id: organizations.id })
    .get();
  if (!gone) throw new AppError("not-found", "no such organization");
}

export interface PageRequest {
  limit: number;
  cursor?: string;
}

/** The user's organizations with their role, oldest first (`GET /orgs`). Inactive memberships are left out. */
export async function listUserOrgs(
  deps: Pick<Deps, "db">,
  userId: string,
  page: PageRequest,
): Promise<Page<WireOrg & { role: string }>> {
  const rows = await deps.db
    .select({ org: organizations, role: orgMembers.role })
    .from(orgMembers)
    .innerJoin(organizations, eq(organizations.id, orgMembers.orgId))
    .where(
      and(
        eq(orgMembers.userId, userId),
        eq(orgMembers.active, true),
        pastCursor(page.cursor, organizations.createdAt, organizations.id, "asc"),
      ),
    )
    .orderBy(asc(organizations.createdAt), asc(organizations.id))
    .limit(page.limit + 1)
    .all();
  return toPage(
    rows,
    page.limit,
    (r) => [r.org.createdAt, r.org.id],
    (r) => ({ ...toWireOrg(r.org), role: r.role }),
  );
}

/** Every organization, newest first, `q` matching a part of the name or slug (the admin API). */
export async function listOrgs(
  deps: Pick<Deps, "db">,
  page: PageRequest & { q?: string },
): Promise<Page<WireOrg>> {
  // Not LIKE: D1 refuses a pattern over 50 bytes, and `q` may be longer (the fuzz of issue 42 found the 500).
  const search: SQL | undefined = page.q
    ? or(contains(organizations.name, page.q), contains(organizations.slug, page.q))
    : undefined;
  const rows = await deps.db
    .select()
    .from(organizations)
    .where(and(search, pastCursor(page.cursor, organizations.createdAt, organizations.id, "desc")))
    .orderBy(desc(organizations.createdAt), desc(organizations.id))
    .limit(page.limit + 1)
    .all();
  return toPage(rows, page.limit, (r) => [r.createdAt, r.id], toWireOrg);
}
