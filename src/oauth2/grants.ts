import { and, eq, inArray, sql } from "drizzle-orm";
import { base64url } from "jose";
import type { Db } from "../db/client";
import { routedUuid, shardOfRouted } from "../db/routed-ids";
import {
  type OAuth2ClientRow,
  type OAuth2GrantRow,
  oauth2Codes,
  oauth2Grants,
  type UserRow,
  users,
} from "../db/schema";
import { type Shards, slotOfUser } from "../db/shards";
import type { Deps } from "../http/deps";
import { revokeFamily, startFamily } from "../token-families";
import { OAuth2Error } from "./errors";
import { GRANT_ID_PREFIX, REFRESH_TOKEN_PREFIX } from "./token-prefixes";

/**
 * Grants: what a user allowed a client, from a consumed code on. Their refresh tokens (refresh-tokens.ts) rotate in
 * the same token families as sessions.
 */

/**
 * A grant lives in its user's shard (src/db/shards.ts), and its id says which: a UUID minted with the user's slot
 * (src/db/routed-ids.ts), so that a refresh token, an access token's `grant_id` or a revocation reaches the grant's
 * row without a lookup. `slot` is the user's (`slotOfUser`), or the one the authorization code carries (codes.ts).
 */
export const newGrantId = (slot: number) => `${GRANT_ID_PREFIX}${routedUuid(slot)}`;

/**
 * The shard of the grant `grantId` names; undefined when the id names none (not a minted grant id, with several
 * shards): such a grant exists nowhere, as an unknown one.
 */
export function shardOfGrant(shards: Shards, grantId: string): Db | undefined {
  if (!grantId.startsWith(GRANT_ID_PREFIX)) return undefined;
  return shardOfRouted(shards, grantId.slice(GRANT_ID_PREFIX.length));
}

/**
 * A refresh token names its grant (refresh-tokens.ts): `ort_` + the grant's UUID as 32 hex digits + 256 random bits;
 * its family's locator is the first six of those digits. Tokens from before were `ort_` + 43 characters.
 */
const TOKEN = new RegExp(`^${REFRESH_TOKEN_PREFIX}([0-9a-f]{32})[A-Za-z0-9_-]{43}$`);
const grantHex = (grantId: string) => grantId.slice(GRANT_ID_PREFIX.length).replace(/-/g, "");

/** A grant's family lives in the `SessionFamilies` object its id's first six hex digits name. */
export const grantLocator = (grantId: string) => grantHex(grantId).slice(0, 6);

export const newRefreshToken = (grantId: string) =>
  `${REFRESH_TOKEN_PREFIX}${grantHex(grantId)}${base64url.encode(crypto.getRandomValues(new Uint8Array(32)))}`;

/** A refresh token of this kind parsed: the grant it names and its family's locator; null for anything else. */
export function parseRefreshToken(token: string): { grantId: string; locator: string } | null {
  const hex = TOKEN.exec(token)?.[1];
  if (!hex) return null;
  const uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { grantId: `${GRANT_ID_PREFIX}${uuid}`, locator: hex.slice(0, 6) };
}

export function startGrantFamily(
  deps: Deps,
  grantId: string,
  token: string,
  lifetimeMs: number,
): Promise<void> {
  return startFamily(deps, grantLocator(grantId), grantId, token, lifetimeMs);
}

/**
 * A new grant's first refresh token, its family started; if the start fails (503 `temporarily_unavailable`) the grant
 * row just written goes, after the answer and best effort (its database may be down too), as a half-made session does
 * (auth/new-sessions.ts): a grant whose token no family knows refreshes nothing, and no answer carried it. A family
 * the failed call did start holds a token no one was given, and its grant is gone: it refreshes nothing either.
 */
async function startNewGrantFamily(
  deps: Deps,
  db: Db,
  grantId: string,
  token: string,
  lifetimeMs: number,
): Promise<void> {
  try {
    await startGrantFamily(deps, grantId, token, lifetimeMs);
  } catch (error) {
    deps.background(db.delete(oauth2Grants).where(eq(oauth2Grants.id, grantId)).run());
    throw error;
  }
}

export function issuesRefreshTokens(client: OAuth2ClientRow): boolean {
  return client.grantTypes.includes("refresh_token");
}

/**
 * The grant a consumed code starts, and its first refresh token's family, side by side (issue 48, "Round trips": the
 * exchange's second wave, after the batch that took the code and read its user, codes.ts). The grant's client, user,
 * scopes and sign-in time are copied from the code row that `consumeCode` marked with this grant id, so they cannot
 * differ from what the user authorized. Half a grant is none: if either half fails, or the code row went in between
 * (its client or user deleted, the user disabled), the half that was made goes after the answer, best effort, as a
 * half-made session does (auth/new-sessions.ts): a family whose grant is missing refreshes nothing, and no answer
 * carried its token.
 */
export async function createGrant(
  deps: Deps,
  client: OAuth2ClientRow,
  codeHash: string,
  grantId: string,
  binding: { dpopJkt: string | null } = { dpopJkt: null },
): Promise<{ grant: OAuth2GrantRow; refreshToken?: string }> {
  // The code and the grant it starts are in the user's shard, which the grant id names (`consumeCode` minted it).
  const db = shardOfGrant(deps.shards, grantId);
  const gone = new OAuth2Error("invalid_grant", "the code is invalid, expired or used");
  if (!db) throw gone;
  const now = deps.now();
  const withRefresh = issuesRefreshTokens(client);
  const expiresAt = now + 1000 * (withRefresh ? client.refreshTokenLifetime : client.accessTokenLifetime);
  const refreshToken = withRefresh ? newRefreshToken(grantId) : undefined;
  const insertGrant = db
    .insert(oauth2Grants)
    .select(
      db
        .select({
          id: oauth2Codes.grantId,
          clientId: oauth2Codes.clientId,
          userId: oauth2Codes.userId,
          scopes: oauth2Codes.scopes,
          resources: oauth2Codes.resources,
          authTime: oauth2Codes.authTime,
          createdAt: sql<number>`${now}`.as("created_at"),
          lastUsedAt: sql<number>`${now}`.as("last_used_at"),
          expiresAt: sql<number>`${expiresAt}`.as("expires_at"),
          // Last, in the table's order (an insert-select names every column in order).
          orgId: oauth2Codes.orgId,
          acr: oauth2Codes.acr,
          amr: oauth2Codes.amr,
          sid: oauth2Codes.sid,
          // The token request's DPoP key binds the grant; without a proof, the key the authorize request named.
          dpopJkt: binding.dpopJkt ? sql<string>`${binding.dpopJkt}`.as("dpop_jkt") : oauth2Codes.dpopJkt,
          // RFC 9396: what the user approved on the consent page, as the code holds it.
          authorizationDetails: oauth2Codes.authorizationDetails,
        })
        .from(oauth2Codes)
        .innerJoin(users, eq(users.id, oauth2Codes.userId))
        .where(
          and(
            eq(oauth2Codes.codeHash, codeHash),
            eq(oauth2Codes.grantId, grantId),
            eq(users.disabled, false),
          ),
        ),
    )
    .returning();
  const [inserted, family] = await Promise.allSettled([
    insertGrant,
    refreshToken && startGrantFamily(deps, grantId, refreshToken, client.refreshTokenLifetime * 1000),
  ]);
  const grant = inserted.status === "fulfilled" ? inserted.value[0] : undefined;
  if (grant && family.status === "fulfilled") return { grant, refreshToken };
  if (grant) deps.background(db.delete(oauth2Grants).where(eq(oauth2Grants.id, grantId)).run());
  if (refreshToken && family.status === "fulfilled") {
    deps.background(revokeFamily(deps, grantLocator(grantId), grantId));
  }
  if (inserted.status === "rejected") throw inserted.reason;
  if (family.status === "rejected") throw family.reason;
  throw gone;
}

/**
 * The user of the code this request takes, read in the take's batch, after it (codes.ts `consumeCode`): the
 * exchange's first wave holds the code and its user.
 */
export function userOfTakenCode(db: Db, codeHash: string, grantId: string) {
  return db
    .select()
    .from(users)
    .where(
      inArray(
        users.id,
        db
          .select({ id: oauth2Codes.userId })
          .from(oauth2Codes)
          .where(and(eq(oauth2Codes.codeHash, codeHash), eq(oauth2Codes.grantId, grantId))),
      ),
    );
}

/**
 * A grant from an approved device authorization (RFC 8628) or CIBA request: the values were settled when the person
 * approved, and the row was consumed by the same request (also a JWT bearer's, settled by its assertion). Half a
 * grant is none, as in `createGrant`: the insert failing (its answer may be lost after it ran) or the family failing
 * to start removes the row by its id, after the answer, best effort; a failure after this returns is the caller's
 * (token-requests.ts `tokensOfNewGrant`).
 */
export async function createGrantFor(
  deps: Deps,
  client: OAuth2ClientRow,
  values: {
    userId: string;
    scopes: string[];
    resources: string[];
    authTime: number;
    acr?: string | null;
    amr?: string[] | null;
    sid?: string | null;
    dpopJkt?: string | null;
    /** A CIBA client confined to an organization (its `backchannelOrganization`): the grant acts in it. */
    orgId?: string | null;
    /** RFC 9396: what the person approved (a CIBA request's, checked against the client's types). */
    authorizationDetails?: OAuth2GrantRow["authorizationDetails"];
  },
): Promise<{ grant: OAuth2GrantRow; refreshToken?: string }> {
  const now = deps.now();
  const grantId = newGrantId(slotOfUser(values.userId));
  const withRefresh = issuesRefreshTokens(client);
  const expiresAt = now + 1000 * (withRefresh ? client.refreshTokenLifetime : client.accessTokenLifetime);
  const db = deps.shards.ofUser(values.userId);
  const grant = await db
    .insert(oauth2Grants)
    .values({ id: grantId, clientId: client.clientId, ...values, createdAt: now, lastUsedAt: now, expiresAt })
    .returning()
    .get()
    .catch((error: unknown) => {
      deps.background(
        db.delete(oauth2Grants).where(eq(oauth2Grants.id, grantId)).run(),
        "half a grant removed",
      );
      throw error;
    });
  if (!grant) throw new OAuth2Error("invalid_grant", "the authorization could not be granted");
  const refreshToken = withRefresh ? newRefreshToken(grantId) : undefined;
  if (refreshToken)
    await startNewGrantFamily(deps, db, grantId, refreshToken, client.refreshTokenLifetime * 1000);
  return { grant, refreshToken };
}

/**
 * Ends a grant: its row goes from its user's shard, and with it (by cascade) its legacy refresh tokens; its access
 * tokens fail introspection and userinfo from now on, and its refresh tokens fail at the grant's read that precedes
 * every rotation.
 */
export async function revokeGrant(deps: Deps, grantId: string): Promise<void> {
  await shardOfGrant(deps.shards, grantId)?.delete(oauth2Grants).where(eq(oauth2Grants.id, grantId));
}

/** The grant an access token names, if it still stands and its user is enabled. */
export async function findLiveGrant(
  deps: Deps,
  grantId: string,
): Promise<{ grant: OAuth2GrantRow; user: UserRow } | undefined> {
  const row = await shardOfGrant(deps.shards, grantId)
    ?.select({ grant: oauth2Grants, user: users })
    .from(oauth2Grants)
    .innerJoin(users, eq(users.id, oauth2Grants.userId))
    .where(eq(oauth2Grants.id, grantId))
    .get();
  return row && !row.user.disabled ? row : undefined;
}
