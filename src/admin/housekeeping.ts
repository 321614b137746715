import { lte } from "drizzle-orm";
import { consoleSessions } from "../db/schema";
import type { Deps } from "../http/deps";

/** The daily sweep of the console's expired sessions (home database). */
export async function sweepConsoleSessions({ shards }: Pick<Deps, "shards">, now: number): Promise<void> {
  await shards.home.delete(consoleSessions).where(lte(consoleSessions.expiresAt, now)).run();
}
