import { count } from "drizzle-orm";
import { type UserRow, users } from "../db/schema";
import { eachShard } from "../db/shards";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { mergeAcross } from "./across-shards";
import { compareUsers, pastPosition, positionOf, userOrder } from "./user-order";

/**
 * The users list by page number (GoTrue's `page`/`per_page`, the Supabase face's `auth.admin.listUsers`), newest
 * first as the admin API lists them. A page is the merge of every shard's first `page × perPage` rows, so its cost
 * grows with its depth: bounded at `MAX_DEPTH` rows, past which the admin API's cursor (`GET /admin/users?cursor=`)
 * walks any depth at the cost of one page. The total is one count per shard.
 */
export const MAX_DEPTH = 10_000;

export async function listUsersPage(
  deps: Deps,
  { page, perPage }: { page: number; perPage: number },
): Promise<{ rows: UserRow[]; total: number }> {
  if (page * perPage > MAX_DEPTH) {
    throw new AppError(
      "invalid-request",
      `page × per_page is at most ${MAX_DEPTH}: list further with the admin API's cursor (GET /auth/v1/admin/users)`,
    );
  }
  const [merged, counts] = await Promise.all([
    mergeAcross(deps.shards, {
      read: (db, after, limit) =>
        db
          .select()
          .from(users)
          .where(after ? pastPosition("newest", positionOf("newest", after)) : undefined)
          .orderBy(...userOrder("newest"))
          .limit(limit)
          .all(),
      compare: compareUsers("newest"),
      take: page * perPage,
    }),
    eachShard(deps.shards, async (db) => (await db.select({ n: count() }).from(users).get())?.n ?? 0),
  ]);
  return { rows: merged.slice((page - 1) * perPage), total: counts.reduce((sum, n) => sum + n, 0) };
}
