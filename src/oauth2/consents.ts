import { and, eq } from "drizzle-orm";
import { oauth2Consents } from "../db/schema";
import type { Deps } from "../http/deps";

/** Consents are rows of the user's, in the user's shard (src/db/shards.ts). */

/** Whether the user allowed this client every scope asked for, on an earlier visit to the built-in page. */
export async function hasConsent(
  deps: Deps,
  userId: string,
  clientId: string,
  scopes: string[],
): Promise<boolean> {
  const row = await deps.shards
    .ofUser(userId)
    .select({ scopes: oauth2Consents.scopes })
    .from(oauth2Consents)
    .where(and(eq(oauth2Consents.userId, userId), eq(oauth2Consents.clientId, clientId)))
    .get();
  return !!row && scopes.every((scope) => row.scopes.includes(scope));
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
