import { and, eq } from "drizzle-orm";
import { activeMembership } from "../auth";
import { oauth2Grants } from "../db/schema";
import type { Deps } from "../http/deps";
import type { AuthorizationDetail } from "./authorization-details";
import { findOAuth2Client } from "./clients";
import { findLiveGrant, shardOfGrant } from "./grants";
import { findLiveRefreshToken, revokeRefreshToken } from "./refresh-tokens";
import { REFRESH_TOKEN_PREFIX } from "./token-prefixes";
import { authenticationClaims, type OAuth2AccessTokenPayload, verifyOAuth2AccessToken } from "./tokens";

/** RFC 7662 §2.2; only `active` when the token is not active. */
export type Introspection =
  | { active: false }
  | {
      active: true;
      client_id: string;
      exp: number;
      iat?: number;
      iss: string;
      scope: string;
      sub: string;
      token_type: "Bearer" | "DPoP" | "refresh_token";
      /** RFC 9449 §6.2: the key a DPoP-bound access token is bound to. */
      cnf?: { jkt: string };
      aud?: string | string[];
      jti?: string;
      org_id?: string;
      /** RFC 8693 §4.1: who acts for `sub`, on an exchanged token. */
      act?: OAuth2AccessTokenPayload["act"];
      /** Contract §12: how and when the user signed in, from the grant (RFC 9470 §6.2). */
      auth_time?: number;
      acr?: string;
      amr?: string[];
      /** RFC 9396 §9.2: the authorization details granted: the access token's, a refresh token's grant's. */
      authorization_details?: AuthorizationDetail[];
    };

const isRefreshToken = (token: string) => token.startsWith(REFRESH_TOKEN_PREFIX);

/**
 * Introspection for the calling client (contract §3.5): only its own tokens are ever active to it, so one client
 * cannot learn anything about another's tokens. An access token is active while it verifies and its grant stands;
 * a refresh token while it is the current one of a standing grant.
 */
export async function introspect(deps: Deps, clientId: string, token: string): Promise<Introspection> {
  const inactive = { active: false } as const;
  const iss = deps.config.urls.server;
  if (isRefreshToken(token)) {
    const found = await findLiveRefreshToken(deps, clientId, token);
    if (!found) return inactive;
    const org = await liveOrgOf(deps, found.grant.orgId, found.user.id);
    return {
      active: true,
      client_id: clientId,
      exp: Math.floor(found.expiresAt / 1000),
      iss,
      scope: found.grant.scopes.join(" "),
      sub: found.user.id,
      token_type: "refresh_token",
      ...(org ? { org_id: org } : {}),
      ...authenticationClaims(found.grant),
      ...(found.grant.authorizationDetails?.length
        ? { authorization_details: found.grant.authorizationDetails }
        : {}),
    };
  }
  const payload = await verifyOAuth2AccessToken(deps.config, token);
  if (!payload || payload.client_id !== clientId) return inactive;
  // A grant's token is active while the grant stands; a client's own token while the client exists.
  const live = payload.grant_id ? await findLiveGrant(deps, payload.grant_id) : undefined;
  // An exchanged token (RFC 8693, `act`) stands on the user's grant, which another client holds.
  const stands = payload.grant_id
    ? live?.grant.clientId === clientId || (!!payload.act && live?.user.id === payload.sub)
    : (await findOAuth2Client(deps, clientId)) !== undefined;
  if (!stands) return inactive;
  // The token's org as long as its grant still has it and the user is still an active member: a resource server
  // that introspects sees a removal at once, where one that only verifies the JWT sees it at the next refresh.
  const org =
    payload.org_id && live?.grant.orgId === payload.org_id
      ? await liveOrgOf(deps, payload.org_id, payload.sub)
      : undefined;
  return {
    active: true,
    client_id: clientId,
    exp: payload.exp,
    iat: payload.iat,
    iss,
    scope: payload.scope,
    sub: payload.sub,
    ...(payload.cnf?.jkt ? { token_type: "DPoP", cnf: { jkt: payload.cnf.jkt } } : { token_type: "Bearer" }),
    aud: payload.aud!,
    ...(payload.jti ? { jti: payload.jti } : {}),
    ...(org ? { org_id: org } : {}),
    ...(payload.act ? { act: payload.act } : {}),
    ...(live ? authenticationClaims(live.grant) : {}),
    ...(payload.authorization_details?.length
      ? { authorization_details: payload.authorization_details }
      : {}),
  };
}

/** `orgId` while `userId` is an active member of it; undefined otherwise. */
async function liveOrgOf(deps: Deps, orgId: string | null, userId: string): Promise<string | undefined> {
  return orgId ? (await activeMembership(deps, orgId, userId))?.orgId : undefined;
}

/**
 * RFC 7009 for the calling client: revoking any token of one of its grants ends that grant (its refresh tokens and,
 * at introspection and userinfo, its access tokens). Another client's token or an unknown one changes nothing, and
 * the answer is the same empty 200 either way.
 */
export async function revoke(deps: Deps, clientId: string, token: string): Promise<void> {
  if (isRefreshToken(token)) return revokeRefreshToken(deps, clientId, token);
  const payload = await verifyOAuth2AccessToken(deps.config, token);
  // A client's own token (client_credentials) has no grant to end: it runs to its expiry.
  if (payload?.client_id !== clientId || !payload.grant_id) return;
  await shardOfGrant(deps.shards, payload.grant_id)
    ?.delete(oauth2Grants)
    .where(and(eq(oauth2Grants.id, payload.grant_id), eq(oauth2Grants.clientId, clientId)));
}
