import { and, eq, isNotNull } from "drizzle-orm";
import { endSessionsUnderSso } from "../auth";
import { organizations, orgDomains, ssoConnections } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";

/** Turns enforced SSO on or off; on needs an enabled connection (else everyone of the domains would be locked out). */
export async function setEnforceSso(deps: Deps, orgId: string, enforce: boolean) {
  if (enforce) {
    const connection = await deps.db
      .select({ id: ssoConnections.id })
      .from(ssoConnections)
      .where(and(eq(ssoConnections.orgId, orgId), eq(ssoConnections.enabled, true)))
      .get();
    if (!connection) {
      throw new AppError("invalid-request", "enforce: add and enable a connection before enforcing SSO");
    }
  }
  const row = await deps.db
    .update(organizations)
    .set({ enforceSso: enforce, updatedAt: deps.now() })
    .where(eq(organizations.id, orgId))
    .returning({ orgId: organizations.id, enforceSso: organizations.enforceSso })
    .get();
  if (!row) throw new AppError("not-found", "no such organization");
  if (enforce) {
    // Sessions begun by the methods now refused end at once (src/auth/sso-sweep.ts): their next refresh fails.
    const domains = await deps.db
      .select({ domain: orgDomains.domain })
      .from(orgDomains)
      .where(and(eq(orgDomains.orgId, orgId), isNotNull(orgDomains.verifiedAt)))
      .all();
    await endSessionsUnderSso(
      deps,
      domains.map((d) => d.domain),
    );
  }
  return row;
}
