import { lte } from "drizzle-orm";
import { orgInvitations } from "../db/schema";
import type { Deps } from "../http/deps";

/** The daily sweep of expired invitations (home database): never listed nor accepted, then gone. */
export async function sweepInvitations({ shards }: Pick<Deps, "shards">, now: number): Promise<void> {
  await shards.home.delete(orgInvitations).where(lte(orgInvitations.expiresAt, now)).run();
}
