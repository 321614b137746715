import { and, eq, isNotNull, sql } from "drizzle-orm";
import { type SsoConnectionRow, ssoConnections } from "../db/schema";
import type { Deps } from "../http/deps";

/**
 * The connections a setup link made (contract operators.md §5; src/setup-links/): each serves only the domains
 * verified through its link, so a domain the link verifies later is added to each of them, unless an owner widened
 * the connection to all the org's domains (`domains` null), which stays so.
 */

export async function connectionsOfLink(
  deps: Pick<Deps, "db">,
  orgId: string,
  setupLinkId: string,
): Promise<SsoConnectionRow[]> {
  return deps.db
    .select()
    .from(ssoConnections)
    .where(and(eq(ssoConnections.orgId, orgId), eq(ssoConnections.setupLinkId, setupLinkId)))
    .all();
}

export async function serveDomainThroughLink(deps: Pick<Deps, "db">, setupLinkId: string, domain: string) {
  await deps.db
    .update(ssoConnections)
    .set({ domains: sql`json_insert(${ssoConnections.domains}, '$[#]', ${domain})` })
    .where(
      and(
        eq(ssoConnections.setupLinkId, setupLinkId),
        isNotNull(ssoConnections.domains),
        sql`NOT EXISTS (SELECT 1 FROM json_each(${ssoConnections.domains}) WHERE value = ${domain})`,
      ),
    )
    .run();
}
