import { and, eq } from "drizzle-orm";
import { oauth2Consents } from "../db/schema";
import type { Deps } from "../http/deps";

/** Consents are rows of the user's, in the user's shard (src/db/shards.ts). */

/**
 * What the user allowed this client on earlier visits to the built-in page: its scopes and the RFC 8707 resources its
 * tokens may be for (both empty: never asked). A request within both needs no consent; a wider one is asked about
 * again (incremental consent, contract §12).
 */
export interface GrantedConsent {
  scopes: string[];
  /** Only resources named by `resource` and allowed; a row from before migration 0048 has none (nothing assumed). */
  resources: string[];
}

export async function grantedConsent(deps: Deps, userId: string, clientId: string): Promise<GrantedConsent> {
  const row = await deps.shards
    .ofUser(userId)
    .select({ scopes: oauth2Consents.scopes, resources: oauth2Consents.resources })
    .from(oauth2Consents)
    .where(and(eq(oauth2Consents.userId, userId), eq(oauth2Consents.clientId, clientId)))
    .get();
  return { scopes: row?.scopes ?? [], resources: row?.resources ?? [] };
}

/**
 * Whether an earlier consent covers a request: every scope and every resource it names was allowed. A request that
 * names no resource gets a token for the client itself (resources.ts `audienceOf`), which any consent to the client
 * covers; one that names a resource is asked about it, since the page showed the person where the tokens go ("It asks
 * for access to: …") and their approval was of that list, not of whatever the client names next.
 */
export function consentCovers(
  granted: GrantedConsent,
  request: { scopes: readonly string[]; resources: readonly string[] },
): boolean {
  return (
    request.scopes.every((scope) => granted.scopes.includes(scope)) &&
    request.resources.every((resource) => granted.resources.includes(resource))
  );
}

/**
 * Remembers a consent: the scopes and resources granted so far and these, so only a new scope or resource is asked
 * about again.
 */
export async function rememberConsent(
  deps: Deps,
  userId: string,
  clientId: string,
  allowed: { scopes: string[]; resources: string[] },
): Promise<void> {
  const where = and(eq(oauth2Consents.userId, userId), eq(oauth2Consents.clientId, clientId));
  const db = deps.shards.ofUser(userId);
  const current = await db
    .select({ scopes: oauth2Consents.scopes, resources: oauth2Consents.resources })
    .from(oauth2Consents)
    .where(where)
    .get();
  const scopes = [...new Set([...(current?.scopes ?? []), ...allowed.scopes])];
  const resources = [...new Set([...(current?.resources ?? []), ...allowed.resources])];
  deps.audit({
    type: "oauth2.consent",
    userId,
    detail: { clientId, scopes: allowed.scopes, resources: allowed.resources },
  });
  await db
    .insert(oauth2Consents)
    .values({ userId, clientId, scopes, resources, grantedAt: deps.now() })
    .onConflictDoUpdate({
      target: [oauth2Consents.userId, oauth2Consents.clientId],
      set: { scopes, resources, grantedAt: deps.now() },
    });
}
