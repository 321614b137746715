import { lte } from "drizzle-orm";
import { ssoAssertionIds, ssoRequests } from "../db/schema";
import type { Deps } from "../http/deps";

/** The daily sweep of expired enterprise sign-in requests and remembered assertion ids (home database). */
export async function sweepSso({ shards }: Pick<Deps, "shards">, now: number): Promise<void> {
  const db = shards.home;
  await db.batch([
    db.delete(ssoRequests).where(lte(ssoRequests.expiresAt, now)),
    // An assertion id is remembered until its assertion expires: a replay after that fails its time check anyway.
    db.delete(ssoAssertionIds).where(lte(ssoAssertionIds.expiresAt, now)),
  ]);
}
