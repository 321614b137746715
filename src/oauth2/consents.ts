import { and, eq } from "drizzle-orm";
import { oauth2Consents } from "../db/schema";
import type { Deps } from "../http/deps";

/** Consents are rows of the user's, in the user's shard (src/db/shards.ts). */

/**
 * The scopes the user allowed this client on earlier visits to the built-in page (none: never asked). A request
 * within them needs no consent; a wider one is asked about the new scopes only (incremental consent, contract §12).
 */
export async function grantedScopes(deps: Deps, userId: string, clientId: string): Promise<string[]> {
  const row = await deps.shards
    .ofUser(userId)
    .select({ scopes: oauth2Consents.scopes })
    .from(oauth2Consents)
    .where(and(eq(oauth2Consents.userId, userId), eq(oauth2Consents.clientId, clientId)))
    .get();
  return row?.scopes ?? [];
}

/** Remembers a consent: the scopes granted so far and these, so only a new scope is asked about again. */
export async function rememberConsent(
  deps: Deps,
  userId: string,
  clientId: string,
  scopes: string[],
): Promise<void> {
  const where = and(eq(oauth2Consents.userId, userId), eq(oauth2Consents.clientId, clientId));
  const db = deps.shards.ofUser(userId);
  const current = await db.select({ scopes: oauth2Consents.scopes }).from(oauth2Consents).where(where).get();
  const union = [...new Set([...(current?.scopes ?? []), ...scopes])];
  deps.audit({ type: "oauth2.consent", userId, detail: { clientId, scopes } });
  await db
    .insert(oauth2Consents)
    .values({ userId, clientId, scopes: union, grantedAt: deps.now() })
    .onConflictDoUpdate({
      target: [oauth2Consents.userId, oauth2Consents.clientId],
      set: { scopes: union, grantedAt: deps.now() },
    });
}
