import { and, eq, gt, inArray, sql } from "drizzle-orm";
import { base64url } from "jose";
import type { RotateOutcome } from "../auth/sessions";
import {
  type OAuth2ClientRow,
  type OAuth2GrantRow,
  oauth2Codes,
  oauth2Grants,
  oauth2RefreshTokens,
  type UserRow,
  users,
} from "../db/schema";
import type { Deps } from "../http/deps";
import { decrypt, encrypt, randomUuid, sha256Hex } from "../lib/crypto";
import { OAuth2Error } from "./errors";

/**
 * Grants and their refresh tokens. A grant's refresh tokens rotate in the same `RefreshSession` Durable Object
 * design as sessions (contract §5.2): single use, the same successor inside the grace window, and a replay after it
 * revokes the family, here the grant. The D1 index `oauth2_refresh_tokens` proves a token belongs to a grant before
 * the object is asked, so a made-up token can never revoke anyone's grant.
 */

const REFRESH_SHAPE = /^ort_[A-Za-z0-9_-]{43}$/;
const newRefreshToken = () => `ort_${base64url.encode(crypto.getRandomValues(new Uint8Array(32)))}`;

function familyStub(deps: Deps, grantId: string) {
  return deps.env.REFRESH_SESSIONS.get(deps.env.REFRESH_SESSIONS.idFromName(`oauth2:${grantId}`));
}

export const newGrantId = () => `og_${randomUuid()}`;

export function issuesRefreshTokens(client: OAuth2ClientRow): boolean {
  return client.grantTypes.includes("refresh_token");
}

/**
 * The grant a consumed code starts, with its first refresh token, in one batch. The grant's client, user, scopes and
 * sign-in time are copied from the code row that `consumeCode` marked with this grant id, so they cannot differ from
 * what the user authorized.
 */
export async function createGrant(
  deps: Deps,
  client: OAuth2ClientRow,
  codeHash: string,
  grantId: string,
): Promise<{ grant: OAuth2GrantRow; refreshToken?: string }> {
  const { db } = deps;
  const now = deps.now();
  const withRefresh = issuesRefreshTokens(client);
  const expiresAt = now + 1000 * (withRefresh ? client.refreshTokenLifetime : client.accessTokenLifetime);
  const refreshToken = withRefresh ? newRefreshToken() : undefined;
  const insertGrant = db
    .insert(oauth2Grants)
    .select(
      db
        .select({
          id: oauth2Codes.grantId,
          clientId: oauth2Codes.clientId,
          userId: oauth2Codes.userId,
          scopes: oauth2Codes.scopes,
          authTime: oauth2Codes.authTime,
          createdAt: sql<number>`${now}`.as("created_at"),
          lastUsedAt: sql<number>`${now}`.as("last_used_at"),
          expiresAt: sql<number>`${expiresAt}`.as("expires_at"),
        })
        .from(oauth2Codes)
        .where(and(eq(oauth2Codes.codeHash, codeHash), eq(oauth2Codes.grantId, grantId))),
    )
    .returning();
  const [[grant]] = refreshToken
    ? await db.batch([
        insertGrant,
        db.insert(oauth2RefreshTokens).select(
          db
            .select({
              tokenHash: sql<string>`${await sha256Hex(refreshToken)}`.as("token_hash"),
              grantId: oauth2Grants.id,
              expiresAt: oauth2Grants.expiresAt,
            })
            .from(oauth2Grants)
            .where(eq(oauth2Grants.id, grantId)),
        ),
      ])
    : [await insertGrant];
  // The code row went in between (its client or user was deleted).
  if (!grant) throw new OAuth2Error("invalid_grant", "the code is invalid, expired or used");
  return { grant, refreshToken };
}

/** What tokens are made from: a grant's id, scopes and sign-in time. */
export type GrantSummary = Pick<OAuth2GrantRow, "id" | "scopes" | "authTime">;

export interface Refreshed {
  grant: GrantSummary;
  user: UserRow;
  refreshToken: string;
}

/**
 * `grant_type=refresh_token` for `client`. One D1 batch finds the grant through the presented token (only a token
 * of this client's grants resolves), indexes a candidate successor and slides the grant's expiry; the grant's object
 * then decides atomically: rotate, grace (the same successor again) or replay (the grant is revoked).
 */
export async function rotateRefreshToken(
  deps: Deps,
  client: OAuth2ClientRow,
  refreshToken: string,
  /** The scopes asked for (RFC 6749 §6): checked against the grant before anything rotates. */
  askedScopes?: string[],
): Promise<Refreshed> {
  const invalid = new OAuth2Error("invalid_grant", "the refresh token is invalid, expired or revoked");
  if (!REFRESH_SHAPE.test(refreshToken)) throw invalid;
  const { db, config } = deps;
  const now = deps.now();
  const presentedHash = await sha256Hex(refreshToken);
  const candidate = newRefreshToken();
  const candidateHash = await sha256Hex(candidate);
  const expiresAt = now + client.refreshTokenLifetime * 1000;
  const ofClient = db
    .select({ id: oauth2Grants.id })
    .from(oauth2Grants)
    .where(eq(oauth2Grants.clientId, client.clientId));
  const live = and(
    eq(oauth2RefreshTokens.tokenHash, presentedHash),
    gt(oauth2RefreshTokens.expiresAt, now),
    inArray(oauth2RefreshTokens.grantId, ofClient),
  );
  const grantOfPresented = db
    .select({ id: oauth2RefreshTokens.grantId })
    .from(oauth2RefreshTokens)
    .where(live);
  const [[found], candidateSealed] = await Promise.all([
    db.batch([
      // Column names must not repeat in a D1 batch (its rows are objects): the grant's id comes as `grant_id`.
      db
        .select({
          grant: {
            id: oauth2RefreshTokens.grantId,
            scopes: oauth2Grants.scopes,
            authTime: oauth2Grants.authTime,
          },
          user: users,
        })
        .from(oauth2RefreshTokens)
        .innerJoin(oauth2Grants, eq(oauth2Grants.id, oauth2RefreshTokens.grantId))
        .innerJoin(users, eq(users.id, oauth2Grants.userId))
        .where(live),
      db.insert(oauth2RefreshTokens).select(
        db
          .select({
            tokenHash: sql<string>`${candidateHash}`.as("token_hash"),
            grantId: oauth2RefreshTokens.grantId,
            expiresAt: sql<number>`${expiresAt}`.as("expires_at"),
          })
          .from(oauth2RefreshTokens)
          .where(live),
      ),
      db
        .update(oauth2Grants)
        .set({ lastUsedAt: now, expiresAt })
        .where(inArray(oauth2Grants.id, grantOfPresented)),
    ]),
    encrypt(config.AUTH_ENCRYPTION_KEY!, candidate),
  ]);
  const row = found[0];
  if (!row) throw invalid;
  const { grant, user } = row;
  const dropCandidate = () =>
    deps.background(
      db.delete(oauth2RefreshTokens).where(eq(oauth2RefreshTokens.tokenHash, candidateHash)).run(),
    );
  if (user.disabled) {
    dropCandidate();
    throw new OAuth2Error("invalid_grant", "the user is disabled");
  }
  // A refused refresh must leave the presented token as it was: the client may retry without the wider scope.
  if (askedScopes && !askedScopes.every((scope) => grant.scopes.includes(scope))) {
    dropCandidate();
    throw new OAuth2Error("invalid_scope", "a refresh can only narrow the granted scopes");
  }
  const result: RotateOutcome = await familyStub(deps, grant.id).rotate({
    presentedHash,
    candidateHash,
    candidateSealed,
    now,
    graceMs: config.AUTH_REFRESH_TOKEN_REUSE_INTERVAL * 1000,
    expiresAt,
  });
  switch (result.outcome) {
    case "rotated":
      return { grant, user, refreshToken: candidate };
    case "grace":
      dropCandidate();
      return {
        grant,
        user,
        refreshToken: await decrypt(config.AUTH_ENCRYPTION_KEY!, result.successorSealed),
      };
    case "replayed":
    case "revoked":
      await revokeGrant(deps, grant.id);
      deps.audit({
        type: "oauth2.grant-revoked",
        userId: user.id,
        detail: { grantId: grant.id, clientId: client.clientId, reason: "refresh-token-replayed" },
      });
      throw new OAuth2Error("invalid_grant", "the refresh token was used before; the grant is revoked");
  }
}

/**
 * Ends a grant: its row goes, and with it (by cascade) every refresh token; its access tokens fail introspection
 * and userinfo from now on. A rotation already past its D1 lookup cannot index a successor any more (the insert
 * reads the deleted rows), so its object need not be told.
 */
async function revokeGrant(deps: Deps, grantId: string): Promise<void> {
  await deps.db.delete(oauth2Grants).where(eq(oauth2Grants.id, grantId));
}

/** The grant an access token names, if it still stands and its user is enabled. */
export async function findLiveGrant(
  deps: Deps,
  grantId: string,
): Promise<{ grant: OAuth2GrantRow; user: UserRow } | undefined> {
  const row = await deps.db
    .select({ grant: oauth2Grants, user: users })
    .from(oauth2Grants)
    .innerJoin(users, eq(users.id, oauth2Grants.userId))
    .where(eq(oauth2Grants.id, grantId))
    .get();
  return row && !row.user.disabled ? row : undefined;
}

/**
 * A refresh token of `clientId` that would still rotate: indexed, unexpired, its grant standing, its user enabled,
 * and the current one of its family (an older token is indexed too, so that presenting it can revoke the family).
 */
export async function findLiveRefreshToken(
  deps: Deps,
  clientId: string,
  refreshToken: string,
): Promise<{ grant: OAuth2GrantRow; user: UserRow; expiresAt: number; tokenHash: string } | undefined> {
  if (!REFRESH_SHAPE.test(refreshToken)) return undefined;
  const tokenHash = await sha256Hex(refreshToken);
  const row = await deps.db
    .select({ grant: oauth2Grants, user: users, expiresAt: oauth2RefreshTokens.expiresAt })
    .from(oauth2RefreshTokens)
    .innerJoin(oauth2Grants, eq(oauth2Grants.id, oauth2RefreshTokens.grantId))
    .innerJoin(users, eq(users.id, oauth2Grants.userId))
    .where(and(eq(oauth2RefreshTokens.tokenHash, tokenHash), gt(oauth2RefreshTokens.expiresAt, deps.now())))
    .get();
  if (!row || row.grant.clientId !== clientId || row.user.disabled) return undefined;
  if (!(await familyStub(deps, row.grant.id).isCurrent(tokenHash))) return undefined;
  return { ...row, tokenHash };
}
