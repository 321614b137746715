import { and, eq } from "drizzle-orm";
import { findUserByEmail, findUserById } from "../auth";
import { orgMembers } from "../db/schema";
import type { Deps } from "../http/deps";
import { ShortCache } from "./short-cache";

/** What a check knows of a user: the attributes the service supplies and the active memberships (their org roles). */
export interface SubjectFacts {
  id: string;
  email: string | null;
  emailVerified: boolean;
  roles: string[];
  defaultRole: string;
  metadata: Record<string, unknown>;
  memberships: { orgId: string; role: string }[];
}

/** Found users and the misses alike (null), by `id:` or `email:`, for FRESHNESS_MS. */
const subjects = new ShortCache<SubjectFacts | null>(2000);

/**
 * The service's user an AuthZEN subject of type `user` names: by its id, or by its email when the id has an `@`.
 * A deleted, soft-deleted or disabled user is none: every decision about it is false.
 */
export async function findSubject(deps: Pick<Deps, "db" | "shards" | "now">, id: string) {
  const key = id.includes("@") ? `email:${id.toLowerCase()}` : `id:${id}`;
  const now = deps.now();
  const known = subjects.get(key, now);
  if (known !== undefined) return known;
  const facts = await loadSubject(deps, id);
  subjects.set(key, facts, now);
  return facts;
}

async function loadSubject(deps: Pick<Deps, "db" | "shards">, id: string): Promise<SubjectFacts | null> {
  const user = id.includes("@")
    ? await findUserByEmail(deps.shards, id)
    : await findUserById(deps.shards, id);
  if (!user || user.disabled || user.deletedAt !== null) return null;
  const memberships = await deps.db
    .select({ orgId: orgMembers.orgId, role: orgMembers.role })
    .from(orgMembers)
    .where(and(eq(orgMembers.userId, user.id), eq(orgMembers.active, true)))
    .all();
  return {
    id: user.id,
    email: user.email,
    emailVerified: user.emailVerified,
    roles: user.roles,
    defaultRole: user.defaultRole,
    metadata: (user.metadata ?? {}) as Record<string, unknown>,
    memberships,
  };
}
