import { lte } from "drizzle-orm";
import { providerRequests, providerTokenHandoffs } from "../db/schema";
import type { Deps } from "../http/deps";

/** The daily sweep of the home database's pending provider sign-ins and unread token hand-offs that expired. */
export async function sweepProviders({ shards }: Pick<Deps, "shards">, now: number): Promise<void> {
  const db = shards.home;
  await db.batch([
    db.delete(providerRequests).where(lte(providerRequests.expiresAt, now)),
    db.delete(providerTokenHandoffs).where(lte(providerTokenHandoffs.expiresAt, now)),
  ]);
}
