import type { OAuth2ClientRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { type TokenBinding, UNBOUND } from "./dpop";
import { OAuth2Error } from "./errors";
import { findLiveGrant } from "./grants";
import { grantOrganization } from "./organizations";
import { type OAuth2Params, param, scopeList } from "./params";
import { requestedResources } from "./resources";
import { type OAuth2AccessTokenPayload, signOAuth2AccessToken, verifyOAuth2AccessToken } from "./tokens";

/**
 * `grant_type=urn:ietf:params:oauth:grant-type:token-exchange` (RFC 8693), contract §12: a client that was given a
 * user's access token — an MCP server the user's MCP host called, with a token for the MCP server — exchanges it for
 * a token of its own for a downstream API, instead of passing the user's token on (the MCP authorization spec forbids
 * token passthrough: the downstream API would accept a token that was never meant for it). The new token is about
 * the same user, under the same grant (revoking the user's grant ends it at introspection), for the asked audience,
 * with at most the subject token's scopes, and says who acts (`act`, §4.1). No refresh token, no ID token.
 *
 * Which tokens a client may exchange: those issued to it, or for it — whose `aud` names the client itself or one of
 * the resources an admin listed in its `resources` (an MCP server's client lists its own resource identifier and the
 * APIs it calls). A token some other client got for some other API is `invalid_grant`, whoever presents it.
 */

export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";

/** RFC 8693 §3 token type identifiers. */
export const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";

/**
 * How many actors may stand between the user and the last one (`act` nested, §4.1): a chain is a path through the
 * deployment's services, each a narrowing; one longer than this is a loop or a mistake.
 */
const MAX_ACTORS = 5;

function actorsOf(act: unknown): number {
  let depth = 0;
  for (let link = act; link && typeof link === "object"; link = (link as { act?: unknown }).act) depth++;
  return depth;
}

const audiencesOf = (payload: OAuth2AccessTokenPayload) =>
  Array.isArray(payload.aud) ? payload.aud : payload.aud ? [payload.aud] : [];

/** Whether `client` was given the token: issued to it, or for it (its id, or one of its listed resources). */
function givenTo(payload: OAuth2AccessTokenPayload, client: OAuth2ClientRow): boolean {
  if (payload.client_id === client.clientId) return true;
  const audiences = audiencesOf(payload);
  // Only an explicit list: a client without one may reach every resource, which is not the same as being them.
  return audiences.includes(client.clientId) || audiences.some((aud) => client.resources?.includes(aud));
}

/**
 * The subject token, verified: one of this server's access tokens (signature, issuer, type, expiry), about a user
 * (a client's own token has no user to act for), given to this client, and its grant still standing with its user
 * enabled. Anything else is `invalid_grant` (§2.2.2), in words that do not say which check failed.
 */
export async function subjectOf(deps: Deps, client: OAuth2ClientRow, params: OAuth2Params) {
  const token = param(params, "subject_token", 8192);
  if (!token) throw new OAuth2Error("invalid_request", "subject_token is required");
  const type = params.get("subject_token_type");
  if (!type) throw new OAuth2Error("invalid_request", "subject_token_type is required");
  if (type !== ACCESS_TOKEN_TYPE) {
    throw new OAuth2Error(
      "invalid_request",
      `subject_token_type must be ${ACCESS_TOKEN_TYPE}: this server exchanges its own access tokens`,
    );
  }
  const invalid = new OAuth2Error(
    "invalid_grant",
    "the subject token is invalid, expired, revoked or not yours",
  );
  const payload = await verifyOAuth2AccessToken(deps.config, token);
  if (!payload?.grant_id || !givenTo(payload, client)) throw invalid;
  const live = await findLiveGrant(deps, payload.grant_id);
  if (!live || live.user.id !== payload.sub) throw invalid;
  // A token straight from its grant names the grant's client; an exchanged one (with `act`) names its exchanger.
  if (!payload.act && live.grant.clientId !== payload.client_id) throw invalid;
  if (actorsOf(payload.act) >= MAX_ACTORS) {
    throw new OAuth2Error(
      "invalid_grant",
      `the subject token has been exchanged ${MAX_ACTORS} times already`,
    );
  }
  return { payload, ...live };
}

/**
 * `actor_token` (§2.1) is optional: the exchanging client is the actor, and it authenticated. When one is sent, it
 * must say the same: a `client_credentials` token of this very client.
 */
async function checkActor(deps: Deps, client: OAuth2ClientRow, params: OAuth2Params): Promise<void> {
  const token = param(params, "actor_token", 8192);
  const type = params.get("actor_token_type");
  if (!token && !type) return;
  if (!token || type !== ACCESS_TOKEN_TYPE) {
    throw new OAuth2Error("invalid_request", `actor_token goes with actor_token_type ${ACCESS_TOKEN_TYPE}`);
  }
  const actor = await verifyOAuth2AccessToken(deps.config, token);
  if (!actor || actor.grant_id !== undefined || actor.client_id !== client.clientId) {
    throw new OAuth2Error(
      "invalid_request",
      "actor_token must be a client_credentials access token of the exchanging client",
    );
  }
}

/** The scopes asked (all the subject's that the client may have, when none are), never wider (§2.2.2). */
function exchangedScopes(client: OAuth2ClientRow, subject: OAuth2AccessTokenPayload, params: OAuth2Params) {
  const ceiling = scopeList(subject.scope).filter((scope) => client.scopes.includes(scope));
  if (!params.has("scope")) return ceiling;
  const asked = scopeList(param(params, "scope", 1000));
  const outside = asked.filter((scope) => !ceiling.includes(scope));
  if (outside.length > 0) {
    throw new OAuth2Error(
      "invalid_scope",
      `scope wider than the subject token's (or than this client's): ${outside.join(" ").slice(0, 200)}`,
    );
  }
  return asked;
}

/** `resource` (RFC 8707) and `audience` (§2.1) name where the token goes: resources the client may reach. */
function exchangedResources(deps: Deps, client: OAuth2ClientRow, params: OAuth2Params): string[] {
  const audience = param(params, "audience");
  const targets = [...params.resources, ...(audience ? [audience] : [])];
  if (targets.length === 0) {
    throw new OAuth2Error(
      "invalid_request",
      "resource or audience is required: the API the new token is for",
    );
  }
  return requestedResources(deps.config, client, targets);
}

/** What every exchange asks of its client and its `requested_token_type` (here and src/oauth2/vault-exchange.ts). */
export function checkExchangeRequest(client: OAuth2ClientRow, params: OAuth2Params): void {
  // A public client's id is anyone's to send: it cannot show that a token was given to it.
  if (client.tokenEndpointAuthMethod === "none") {
    throw new OAuth2Error("unauthorized_client", "a public client cannot exchange tokens");
  }
  const requested = params.get("requested_token_type");
  if (requested !== undefined && requested !== ACCESS_TOKEN_TYPE) {
    throw new OAuth2Error("invalid_request", `requested_token_type must be ${ACCESS_TOKEN_TYPE}`);
  }
}

export async function exchangeToken(
  deps: Deps,
  client: OAuth2ClientRow,
  params: OAuth2Params,
  binding: TokenBinding = UNBOUND,
) {
  checkExchangeRequest(client, params);
  const { payload, grant, user } = await subjectOf(deps, client, params);
  await checkActor(deps, client, params);
  const scopes = exchangedScopes(client, payload, params);
  const resources = exchangedResources(deps, client, params);
  const now = deps.now();
  // Never outliving the token it came from: an exchange is no way to stretch a token's life.
  const lifetime = Math.min(client.accessTokenLifetime, payload.exp - Math.floor(now / 1000));
  if (lifetime < 1) throw new OAuth2Error("invalid_grant", "the subject token has expired");
  const org = await grantOrganization(deps, grant, user.id);
  const accessToken = await signOAuth2AccessToken({
    config: deps.config,
    client: { ...client, accessTokenLifetime: lifetime },
    user,
    grantId: grant.id,
    scopes,
    resources,
    org,
    // RFC 9449: bound to the exchanging client's own proof key, whatever bound the subject token.
    dpopJkt: binding.dpopJkt,
    act: { sub: client.clientId, client_id: client.clientId, ...(payload.act ? { act: payload.act } : {}) },
    authentication: { authTime: grant.authTime, acr: grant.acr, amr: grant.amr },
    now,
  });
  return {
    access_token: accessToken,
    issued_token_type: ACCESS_TOKEN_TYPE,
    token_type: "Bearer" as const,
    expires_in: lifetime,
    scope: scopes.join(" "),
  };
}
