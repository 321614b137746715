import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { oauth2Clients, vaultConnections, vaultConsents } from "../db/schema";
import type { Deps } from "../http/deps";
import { decrypt, encrypt } from "../lib/crypto";
import type { TokenSet } from "../providers";

/**
 * The vault's rows (src/db/tables/vault.ts), in the user's shard. The provider's tokens are one AES-GCM value under
 * `AUTH_ENCRYPTION_KEY` (src/lib/crypto.ts); nothing here returns them but `openTokens`, which only the token
 * exchange's release (release.ts) and a disconnection's revocation call.
 */

export interface KeptTokens {
  accessToken: string;
  refreshToken?: string;
}

export type ConnectionRow = typeof vaultConnections.$inferSelect;

export const sealTokens = (deps: Deps, tokens: KeptTokens) =>
  encrypt(deps.config.secrets.encryptionKey, JSON.stringify(tokens));

export async function openTokens(deps: Deps, row: ConnectionRow): Promise<KeptTokens> {
  return JSON.parse(await decrypt(deps.config.secrets.encryptionKey, row.sealed)) as KeptTokens;
}

const whereConnection = (userId: string, provider: string) =>
  and(eq(vaultConnections.userId, userId), eq(vaultConnections.provider, provider));

export function findConnection(deps: Deps, userId: string, provider: string) {
  return deps.shards
    .ofUser(userId)
    .select()
    .from(vaultConnections)
    .where(whereConnection(userId, provider))
    .get();
}

/** When an answer's `expires_in` ends; null when the provider gave none. */
export const expiryOf = (deps: Deps, tokens: TokenSet) =>
  typeof tokens.expiresIn === "number" && tokens.expiresIn > 0 ? deps.now() + tokens.expiresIn * 1000 : null;

/**
 * Keeps a new connection, or replaces the tokens of one made before (a second consent: its version grows, so a
 * refresh of the old tokens in flight does not overwrite the new ones), and the clients the user let use it.
 */
export async function keepConnection(
  deps: Deps,
  input: {
    userId: string;
    provider: string;
    providerUserId: string;
    providerEmail: string | null;
    tokens: TokenSet;
    scopes: string[];
    clientIds: string[];
  },
): Promise<void> {
  const db = deps.shards.ofUser(input.userId);
  const before = await findConnection(deps, input.userId, input.provider);
  // A provider that gives a refresh token only at the first consent keeps the first one for the same account.
  const keptRefresh =
    !input.tokens.refreshToken && before && before.providerUserId === input.providerUserId
      ? (await openTokens(deps, before)).refreshToken
      : undefined;
  const refreshToken = input.tokens.refreshToken ?? keptRefresh;
  const sealed = await sealTokens(deps, {
    accessToken: input.tokens.accessToken,
    ...(refreshToken ? { refreshToken } : {}),
  });
  const now = deps.now();
  const values = {
    providerUserId: input.providerUserId,
    providerEmail: input.providerEmail,
    sealed,
    scopes: input.scopes,
    expiresAt: expiryOf(deps, input.tokens),
    refreshingUntil: 0,
    updatedAt: now,
  };
  await db
    .insert(vaultConnections)
    .values({ userId: input.userId, provider: input.provider, createdAt: now, ...values })
    .onConflictDoUpdate({
      target: [vaultConnections.userId, vaultConnections.provider],
      set: { ...values, version: sql`${vaultConnections.version} + 1` },
    });
  if (input.clientIds.length > 0) {
    await db
      .insert(vaultConsents)
      .values(
        input.clientIds.map((clientId) => ({
          userId: input.userId,
          provider: input.provider,
          clientId,
          grantedAt: now,
        })),
      )
      .onConflictDoNothing();
  }
}

/** Removes a connection and every client's consent to it; the removed row (for its revocation), or undefined. */
export async function removeConnection(deps: Deps, userId: string, provider: string) {
  const db = deps.shards.ofUser(userId);
  const row = await db.delete(vaultConnections).where(whereConnection(userId, provider)).returning().get();
  await db
    .delete(vaultConsents)
    .where(and(eq(vaultConsents.userId, userId), eq(vaultConsents.provider, provider)));
  return row;
}

export interface ConnectionView {
  provider: string;
  providerUserId: string;
  email: string | null;
  scopes: string[];
  createdAt: string;
  updatedAt: string;
  /** The clients the user let use it, with their last use (null: never). */
  clients: {
    clientId: string;
    clientName: string;
    grantedAt: string;
    lastUsedAt: string | null;
    uses: number;
  }[];
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The user's connections as the API and the account center show them: no token, ever. */
export async function connectionsOf(deps: Deps, userId: string): Promise<ConnectionView[]> {
  const db = deps.shards.ofUser(userId);
  const rows = await db
    .select()
    .from(vaultConnections)
    .where(eq(vaultConnections.userId, userId))
    .orderBy(asc(vaultConnections.provider));
  if (rows.length === 0) return [];
  const consents = await db
    .select()
    .from(vaultConsents)
    .where(eq(vaultConsents.userId, userId))
    .orderBy(asc(vaultConsents.grantedAt));
  const clientIds = [...new Set(consents.map((consent) => consent.clientId))];
  const names = new Map(
    clientIds.length === 0
      ? []
      : (
          await deps.db
            .select({ clientId: oauth2Clients.clientId, clientName: oauth2Clients.clientName })
            .from(oauth2Clients)
            .where(inArray(oauth2Clients.clientId, clientIds))
        ).map((client) => [client.clientId, client.clientName]),
  );
  return rows.map((row) => ({
    provider: row.provider,
    providerUserId: row.providerUserId,
    email: row.providerEmail,
    scopes: row.scopes,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    clients: consents
      .filter((consent) => consent.provider === row.provider)
      .map((consent) => ({
        clientId: consent.clientId,
        clientName: names.get(consent.clientId) ?? consent.clientId,
        grantedAt: iso(consent.grantedAt),
        lastUsedAt: consent.lastUsedAt === null ? null : iso(consent.lastUsedAt),
        uses: consent.uses,
      })),
  }));
}

/** Whether the user let this client use this connection. */
export async function hasConsent(
  deps: Deps,
  userId: string,
  provider: string,
  clientId: string,
): Promise<boolean> {
  const row = await deps.shards
    .ofUser(userId)
    .select({ clientId: vaultConsents.clientId })
    .from(vaultConsents)
    .where(
      and(
        eq(vaultConsents.userId, userId),
        eq(vaultConsents.provider, provider),
        eq(vaultConsents.clientId, clientId),
      ),
    )
    .get();
  return row !== undefined;
}

/** A release: the consent's last use and count, for the user's list. */
export async function noteUse(deps: Deps, userId: string, provider: string, clientId: string): Promise<void> {
  await deps.shards
    .ofUser(userId)
    .update(vaultConsents)
    .set({ lastUsedAt: deps.now(), uses: sql`${vaultConsents.uses} + 1` })
    .where(
      and(
        eq(vaultConsents.userId, userId),
        eq(vaultConsents.provider, provider),
        eq(vaultConsents.clientId, clientId),
      ),
    );
}
