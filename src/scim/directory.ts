import { and, eq, inArray, isNotNull, sql } from "drizzle-orm";
import { orgDomains, users } from "../db/schema";
import { eachShard } from "../db/shards";
import type { Deps } from "../http/deps";
import type { UserFacts } from "./user-resource";

/** What SCIM reads and ends of the service's users, which live in their shards (not in the home database). */

/** Whether `email`'s domain is one the organization verified (exactly that domain; a subdomain is another one). */
export async function inVerifiedDomain(
  deps: Pick<Deps, "db">,
  orgId: string,
  email: string,
): Promise<boolean> {
  const domain = email.slice(email.lastIndexOf("@") + 1).toLowerCase();
  const row = await deps.db
    .select({ domain: orgDomains.domain })
    .from(orgDomains)
    .where(and(eq(orgDomains.orgId, orgId), eq(orgDomains.domain, domain), isNotNull(orgDomains.verifiedAt)))
    .get();
  return row !== undefined;
}

const FACTS = {
  id: users.id,
  email: users.email,
  displayName: users.displayName,
  createdAt: users.createdAt,
  updatedAt: users.updatedAt,
};

/** Users by id across the shards: one `IN` query per shard that holds any (D1 binds at most 100 values). */
export async function usersByIds(deps: Pick<Deps, "shards">, ids: string[]): Promise<Map<string, UserFacts>> {
  const byShard = new Map<number, string[]>();
  for (const id of ids) {
    const index = deps.shards.indexOfUser(id);
    byShard.set(index, [...(byShard.get(index) ?? []), id]);
  }
  const found = await eachShard(deps.shards, async (db, index) => {
    const mine = byShard.get(index) ?? [];
    const rows: UserFacts[] = [];
    for (let start = 0; start < mine.length; start += 90) {
      rows.push(
        ...(await db
          .select(FACTS)
          .from(users)
          .where(inArray(users.id, mine.slice(start, start + 90)))
          .all()),
      );
    }
    return rows;
  });
  return new Map(found.flat().map((user) => [user.id, user]));
}

/** Sets a provisioned user's display name (the org created the user, so its IdP speaks for the name). */
export async function setDisplayName(
  deps: Pick<Deps, "shards" | "now">,
  userId: string,
  displayName: string,
) {
  await deps.shards
    .ofUser(userId)
    .update(users)
    .set({ displayName, updatedAt: deps.now() })
    .where(and(eq(users.id, userId), sql`${users.displayName} <> ${displayName}`))
    .run();
}
