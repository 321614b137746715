import { and, eq } from "drizzle-orm";
import { oauth2Consents } from "../db/schema";
import type { Deps } from "../http/deps";

/** Whether the user allowed this client every scope asked for, on an earlier visit to the built-in page. */
export async function hasConsent(
  deps: Deps,
  userId: string,
  clientId: string,
  scopes: string[],
): Promise<boolean> {
  const row = await deps.db
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
  const current = await deps.db
    .select({ scopes: oauth2Consents.scopes })
    .from(oauth2Consents)
    .where(where)
    .get();
  const union = [...new Set([...(current?.scopes ?? []), ...scopes])];
  deps.audit({ type: "oauth2.consent", userId, detail: { clientId, scopes } });
  await deps.db
    .insert(oauth2Consents)
    .values({ userId, clientId, scopes: union, grantedAt: deps.now() })
    .onConflictDoUpdate({
      target: [oauth2Consents.userId, oauth2Consents.clientId],
      set: { scopes: union, grantedAt: deps.now() },
    });
}
