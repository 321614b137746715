import { desc, eq } from "drizzle-orm";
import { type OAuth2ClientRow, oauth2Clients, oauth2Consents, oauth2Grants, users } from "../../db/schema";
import { eachShard } from "../../db/shards";
import type { Deps } from "../../http/deps";

/**
 * Who uses a client: its live grants (signed-in people, with their scopes) and the consents it holds (console), and
 * when it was last given tokens (what keeps a self-registered client from expiring).
 */

export interface ClientGrant {
  id: string;
  userId: string;
  userEmail: string | null;
  scopes: string[];
  createdAt: number;
  lastUsedAt: number;
  expiresAt: number;
}

export interface ClientConsent {
  userId: string;
  userEmail: string | null;
  scopes: string[];
  /** RFC 8707 resources allowed besides the client itself (none for a consent from before migration 0048). */
  resources: string[];
  grantedAt: number;
}

const LIMIT = 200;

/** The newest `LIMIT` of every shard's lists, merged: newest first, as one database would have listed them. */
function newest<T>(lists: T[][], at: (row: T) => number, id: (row: T) => string): T[] {
  return lists
    .flat()
    .sort((a, b) => at(b) - at(a) || id(a).localeCompare(id(b)))
    .slice(0, LIMIT);
}

/**
 * Grants and consents are rows of their users, in each user's shard (src/db/shards.ts): every shard is asked for its
 * newest (the console's page of a client, never a user's request), with the user's email from the same shard.
 */
export async function clientUsage(
  deps: Deps,
  clientId: string,
): Promise<{ grants: ClientGrant[]; consents: ClientConsent[] }> {
  const perShard = await eachShard(deps.shards, (db) =>
    db.batch([
      db
        .select({
          id: oauth2Grants.id,
          userId: oauth2Grants.userId,
          userEmail: users.email,
          scopes: oauth2Grants.scopes,
          createdAt: oauth2Grants.createdAt,
          lastUsedAt: oauth2Grants.lastUsedAt,
          expiresAt: oauth2Grants.expiresAt,
        })
        .from(oauth2Grants)
        .leftJoin(users, eq(users.id, oauth2Grants.userId))
        .where(eq(oauth2Grants.clientId, clientId))
        .orderBy(desc(oauth2Grants.lastUsedAt))
        .limit(LIMIT),
      db
        .select({
          userId: oauth2Consents.userId,
          userEmail: users.email,
          scopes: oauth2Consents.scopes,
          resources: oauth2Consents.resources,
          grantedAt: oauth2Consents.grantedAt,
        })
        .from(oauth2Consents)
        .leftJoin(users, eq(users.id, oauth2Consents.userId))
        .where(eq(oauth2Consents.clientId, clientId))
        .orderBy(desc(oauth2Consents.grantedAt))
        .limit(LIMIT),
    ]),
  );
  const grants = newest(
    perShard.map(([shardGrants]) => shardGrants),
    (grant) => grant.lastUsedAt,
    (grant) => grant.id,
  );
  const consents = newest(
    perShard.map(([, shardConsents]) => shardConsents),
    (consent) => consent.grantedAt,
    (consent) => consent.userId,
  );
  const now = deps.now();
  return { grants: grants.filter((grant) => grant.expiresAt > now), consents };
}

/** A day: how stale a registered client's last use may get, so that unused ones can expire without a write per token. */
const USE_RECORDED_EVERY_MS = 86_400_000;

/** After tokens were issued to a client: its last use, at most daily, after the answer. */
export function noteClientUse(deps: Deps, client: OAuth2ClientRow): void {
  const now = deps.now();
  if (client.registration === "admin" || (client.lastUsedAt ?? 0) > now - USE_RECORDED_EVERY_MS) return;
  deps.background(
    deps.db
      .update(oauth2Clients)
      .set({ lastUsedAt: now })
      .where(eq(oauth2Clients.clientId, client.clientId))
      .run(),
  );
}
