import { and, eq, gt } from "drizzle-orm";
import { type OAuth2ClientRow, type OAuth2GrantRow, oauth2Grants, type UserRow, users } from "../db/schema";
import type { Deps } from "../http/deps";
import {
  familyOfCurrentToken,
  type Rotation,
  type RotationRequest,
  revokeFamilyOfToken,
  rotateInFamily,
} from "../token-families";
import {
  isCurrentLegacyGrantToken,
  legacyGrantOfToken,
  rotateLegacyGrantToken,
} from "../token-families/legacy";
import { type AuthorizationDetail, narrowAuthorizationDetails } from "./authorization-details";
import { OAuth2Error } from "./errors";
import { grantLocator, newRefreshToken, parseRefreshToken, revokeGrant, shardOfGrant } from "./grants";
import { narrowedResources } from "./resources";

/**
 * OAuth2 refresh tokens: `ort_` + the grant's id (its UUID's 32 hex digits) + 256 random bits. They rotate in the
 * token families sessions use (src/token-families/): single use, the same successor inside the grace
 * window, a replay revokes the grant; the family's locator is the first six hex digits of the grant id. Naming the
 * grant lets a refresh read the grant first (one D1 read), so a request refused for its client, its user or a wider
 * scope changes nothing, and then make one object call; D1 is written at most hourly (the grant's last use).
 *
 * Tokens from before (`ort_` + 43 characters) are moved onto a family by the legacy drawer
 * (src/token-families/legacy/, docs/operations.md: its removal), through the branches marked "legacy drawer".
 */
/** What tokens are made from: a grant's id, scopes, sign-in time and organization. */
export type GrantSummary = Pick<
  OAuth2GrantRow,
  | "id"
  | "scopes"
  | "resources"
  | "authTime"
  | "orgId"
  | "acr"
  | "amr"
  | "sid"
  | "dpopJkt"
  | "authorizationDetails"
>;

export interface Refreshed {
  grant: GrantSummary;
  user: UserRow;
  refreshToken: string;
}

const invalid = () => new OAuth2Error("invalid_grant", "the refresh token is invalid, expired or revoked");

/** The standing grant `grantId` of `client`, with its user, from the grant's shard (its id names it). */
async function liveGrantOf(deps: Deps, client: OAuth2ClientRow, grantId: string) {
  const db = shardOfGrant(deps.shards, grantId);
  if (!db) return undefined;
  const row = await db
    .select({
      grant: {
        id: oauth2Grants.id,
        scopes: oauth2Grants.scopes,
        resources: oauth2Grants.resources,
        authTime: oauth2Grants.authTime,
        orgId: oauth2Grants.orgId,
        acr: oauth2Grants.acr,
        amr: oauth2Grants.amr,
        sid: oauth2Grants.sid,
        dpopJkt: oauth2Grants.dpopJkt,
        authorizationDetails: oauth2Grants.authorizationDetails,
      },
      expiresAt: oauth2Grants.expiresAt,
      user: users,
    })
    .from(oauth2Grants)
    .innerJoin(users, eq(users.id, oauth2Grants.userId))
    .where(
      and(
        eq(oauth2Grants.id, grantId),
        eq(oauth2Grants.clientId, client.clientId),
        gt(oauth2Grants.expiresAt, deps.now()),
      ),
    )
    .get();
  return row && { ...row, db };
}

/** What a refresh asks for: scopes (RFC 6749 §6) and resources (RFC 8707), which may only narrow the grant's. */
interface Asked {
  scopes?: string[];
  resources?: string[];
  /** The key of the request's DPoP proof (RFC 9449), null or absent without one. */
  dpopJkt?: string | null;
  /** RFC 9396 §6: authorization details, which may only narrow the grant's (checked against the client's types). */
  authorizationDetails?: AuthorizationDetail[];
}

/**
 * Everything that refuses a refresh before its token is spent: a disabled user, a wider scope, resource or
 * authorization details, and for a
 * public client's grant bound to a DPoP key, a request without a proof by that key (RFC 9449 §5: a public client's
 * refresh token is bound to the key, so a stolen one is worthless; a confidential client authenticates, and may
 * change keys).
 */
function checkBeforeRotating(
  client: OAuth2ClientRow,
  grant: GrantSummary,
  user: UserRow,
  asked: Asked,
): void {
  if (user.disabled) throw new OAuth2Error("invalid_grant", "the user is disabled");
  if (client.tokenEndpointAuthMethod === "none" && grant.dpopJkt && asked.dpopJkt !== grant.dpopJkt) {
    // No proof: the grant's error, as for any refresh token used without what it is bound to (FAPI 2.0's suite
    // expects invalid_grant); a proof by another key: the proof's.
    throw new OAuth2Error(
      asked.dpopJkt ? "invalid_dpop_proof" : "invalid_grant",
      "the refresh token is bound to a DPoP key: send a proof signed by that key",
    );
  }
  if (asked.scopes && !asked.scopes.every((scope) => grant.scopes.includes(scope))) {
    throw new OAuth2Error("invalid_scope", "a refresh can only narrow the granted scopes");
  }
  narrowedResources(grant.resources, asked.resources ?? []);
  narrowAuthorizationDetails(grant.authorizationDetails, asked.authorizationDetails);
}

/** `grant_type=refresh_token` for `client` (token-requests.ts): the grant, its user and the successor token. */
export async function rotateRefreshToken(
  deps: Deps,
  client: OAuth2ClientRow,
  refreshToken: string,
  asked: Asked = {},
): Promise<Refreshed> {
  const token = parseRefreshToken(refreshToken);
  if (token) {
    return rotateGrantToken(deps, client, token.grantId, refreshToken, asked, (request) =>
      rotateInFamily(deps, token.locator, request),
    );
  }
  const legacyGrant = await legacyGrantOfToken(deps, client.clientId, refreshToken); // legacy drawer
  if (!legacyGrant) throw invalid();
  return rotateGrantToken(deps, client, legacyGrant, refreshToken, asked, (request) =>
    rotateLegacyGrantToken(deps, legacyGrant, grantLocator(legacyGrant), request),
  );
}

/**
 * The grant is read first (one D1 read), so a request refused for its client, its user or a wider scope spends
 * nothing; then one rotation; the grant's last use is written after the answer when due.
 */
async function rotateGrantToken(
  deps: Deps,
  client: OAuth2ClientRow,
  grantId: string,
  refreshToken: string,
  asked: Asked,
  rotate: (request: RotationRequest) => Promise<Rotation>,
): Promise<Refreshed> {
  const found = await liveGrantOf(deps, client, grantId);
  if (!found) throw invalid();
  checkBeforeRotating(client, found.grant, found.user, asked);
  const lifetimeMs = client.refreshTokenLifetime * 1000;
  const rotation = await rotate({
    presented: refreshToken,
    successor: newRefreshToken(grantId),
    lifetimeMs,
    graceMs: deps.config.tokens.reuseInterval * 1000,
  });
  const successor = await successorOfRotation(deps, client, found, rotation);
  if (rotation.outcome === "rotated" && rotation.touch) {
    const now = deps.now();
    deps.background(
      found.db
        .update(oauth2Grants)
        .set({ lastUsedAt: now, expiresAt: now + lifetimeMs })
        .where(eq(oauth2Grants.id, found.grant.id))
        .run(),
    );
  }
  return { grant: found.grant, user: found.user, refreshToken: successor };
}

/** The successor of a rotation of `found`'s family; a replay revokes the grant. */
async function successorOfRotation(
  deps: Deps,
  client: OAuth2ClientRow,
  found: { grant: GrantSummary; user: UserRow },
  rotation: Rotation,
): Promise<string> {
  if (rotation.outcome === "unknown" || rotation.family !== found.grant.id) throw invalid();
  if (rotation.outcome === "rotated" || rotation.outcome === "grace") return rotation.token;
  if (rotation.outcome === "replayed") {
    await revokeGrant(deps, found.grant.id);
    deps.audit({
      type: "oauth2.grant-revoked",
      userId: found.user.id,
      detail: { grantId: found.grant.id, clientId: client.clientId, reason: "refresh-token-replayed" },
    });
    throw new OAuth2Error("invalid_grant", "the refresh token was used before; the grant is revoked");
  }
  throw invalid();
}

/** Introspection: the grant and user of a refresh token of `clientId` that would still rotate, or undefined. */
export async function findLiveRefreshToken(
  deps: Deps,
  clientId: string,
  refreshToken: string,
): Promise<{ grant: OAuth2GrantRow; user: UserRow; expiresAt: number } | undefined> {
  const token = parseRefreshToken(refreshToken);
  const grantId = token?.grantId ?? (await legacyGrantOfToken(deps, clientId, refreshToken)); // legacy drawer
  const db = grantId ? shardOfGrant(deps.shards, grantId) : undefined;
  if (!grantId || !db) return undefined;
  const row = await db
    .select({ grant: oauth2Grants, user: users })
    .from(oauth2Grants)
    .innerJoin(users, eq(users.id, oauth2Grants.userId))
    .where(
      and(
        eq(oauth2Grants.id, grantId),
        eq(oauth2Grants.clientId, clientId),
        gt(oauth2Grants.expiresAt, deps.now()),
      ),
    )
    .get();
  if (!row || row.user.disabled) return undefined;
  const current = token
    ? (await familyOfCurrentToken(deps, token.locator, refreshToken)) === grantId
    : await isCurrentLegacyGrantToken(deps, grantId, refreshToken); // legacy drawer
  return current ? { ...row, expiresAt: row.grant.expiresAt } : undefined;
}

/**
 * RFC 7009 for the calling client: a refresh token of one of its grants ends that grant. Another client's token, a
 * made-up one (a grant id is no secret: access tokens carry it) or an unknown one changes nothing.
 */
export async function revokeRefreshToken(deps: Deps, clientId: string, refreshToken: string): Promise<void> {
  const token = parseRefreshToken(refreshToken);
  if (token) {
    const ours = await shardOfGrant(deps.shards, token.grantId)
      ?.select({ id: oauth2Grants.id })
      .from(oauth2Grants)
      .where(and(eq(oauth2Grants.id, token.grantId), eq(oauth2Grants.clientId, clientId)))
      .get();
    if (ours && (await revokeFamilyOfToken(deps, token.locator, refreshToken)) === token.grantId) {
      await revokeGrant(deps, token.grantId);
    }
    return;
  }
  const legacyGrant = await legacyGrantOfToken(deps, clientId, refreshToken); // legacy drawer
  if (legacyGrant) await revokeGrant(deps, legacyGrant);
}
