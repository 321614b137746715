import { findUserById } from "../auth";
import type { OAuth2ClientRow, UserRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { verifierMatches } from "../lib/pkce";
import { onFaultPutBack, spentUnlessPutBack } from "../lib/put-back";
import { revokeFamily } from "../token-families";
import {
  type AuthorizationDetail,
  narrowAuthorizationDetails,
  requestedAuthorizationDetails,
  stillAllowedDetails,
} from "./authorization-details";
import { CIBA_GRANT, GRANT_TYPES, keepFetchedClient, noteClientUse } from "./clients";
import { consumeCode, putBackCode } from "./codes";
import { DEVICE_GRANT, redeemPolled } from "./device";
import { boundAnswer, type TokenBinding, UNBOUND } from "./dpop";
import { OAuth2Error } from "./errors";
import {
  createGrant,
  createGrantFor,
  grantLocator,
  issuesRefreshTokens,
  revokeGrant,
  userOfTakenCode,
} from "./grants";
import { JWT_BEARER_GRANT, jwtBearer } from "./jwt-bearer";
import { grantOrganization } from "./organizations";
import { type OAuth2Params, param, scopeList } from "./params";
import { type GrantSummary, rotateRefreshToken } from "./refresh-tokens";
import { narrowedResources, requestedResources } from "./resources";
import { exchangeToken, TOKEN_EXCHANGE_GRANT } from "./token-exchange";
import { signIdToken, signOAuth2AccessToken } from "./tokens";
import {
  asksForProviderToken,
  exchangeForProviderToken,
  FOREIGN_TOKEN,
  type ProviderTokenResponse,
} from "./vault-exchange";

/** The token endpoint's answer (RFC 6749 §5.1, contract §3.5). */
export interface TokenResponse {
  access_token: string;
  /** RFC 9449 §5: `DPoP` when the access token is bound to the request's proof key (set by `tokenRequest`). */
  token_type: "Bearer" | "DPoP";
  expires_in: number;
  refresh_token?: string;
  id_token?: string;
  scope: string;
  /** RFC 8693 §2.2.1: what a token exchange issued. */
  issued_token_type?: string;
  /** RFC 9396 §7.1: the authorization details the access token carries. */
  authorization_details?: AuthorizationDetail[];
}

/**
 * RFC 9396 §6: the token request's `authorization_details`, checked against the client's types (an unknown type or a
 * malformed value is refused before anything is spent); undefined when it asks for none.
 */
const askedDetails = (client: OAuth2ClientRow, params: OAuth2Params) =>
  requestedAuthorizationDetails(client, params.get("authorization_details"));

async function tokensFor(
  deps: Deps,
  input: {
    client: OAuth2ClientRow;
    user: UserRow;
    grant: GrantSummary;
    scopes: string[];
    resources: string[];
    refreshToken?: string;
    nonce?: string | null;
    /** RFC 9449: the key of the request's proof, which the access token is bound to (`cnf.jkt`). */
    dpopJkt: string | null;
    /** RFC 9396: the grant's authorization details, or the fewer the request asked for (`narrowAuthorizationDetails`). */
    authorizationDetails?: AuthorizationDetail[];
  },
): Promise<TokenResponse> {
  const { client, user, grant, scopes, resources, refreshToken, nonce, dpopJkt } = input;
  // A type the admin has taken from the client since the grant is no longer issued (its other details are).
  const authorizationDetails = stillAllowedDetails(client, input.authorizationDetails);
  const base = { config: deps.config, client, grantId: grant.id, scopes, now: deps.now() };
  // Read at every issue: a member removed since the grant gets tokens without the org (contract organizations.md §1).
  const org = await grantOrganization(deps, grant, user.id);
  // The grant's sign-in (contract §12): a resource server reads auth_time, acr and amr off the access token too.
  const authentication = { authTime: grant.authTime, acr: grant.acr, amr: grant.amr };
  const accessToken = await signOAuth2AccessToken({
    ...base,
    user,
    resources,
    org,
    dpopJkt,
    authentication,
    authorizationDetails,
  });
  const idToken = scopes.includes("openid")
    ? await signIdToken({
        ...base,
        user,
        accessToken,
        authentication,
        nonce,
        sid: grant.sid,
      })
    : undefined;
  return {
    access_token: accessToken,
    token_type: "Bearer",
    expires_in: client.accessTokenLifetime,
    ...(refreshToken ? { refresh_token: refreshToken } : {}),
    ...(idToken ? { id_token: idToken } : {}),
    scope: scopes.join(" "),
    ...(authorizationDetails?.length ? { authorization_details: authorizationDetails } : {}),
  };
}

type TokenInput = Parameters<typeof tokensFor>[1];

/**
 * The tokens of a grant this request just made. When they cannot be made (a fault: the signing key's read at a cold
 * isolate, an org-bound grant's membership read), no answer carries the grant: it goes with its refresh-token family,
 * after the answer and best effort, as `createGrant` does with half a grant. Else it would stay in the user's
 * authorized apps, and a code's retry would read as a replay of it.
 */
async function tokensOfNewGrant(deps: Deps, input: TokenInput): Promise<TokenResponse> {
  try {
    return await tokensFor(deps, input);
  } catch (error) {
    const grantId = input.grant.id;
    deps.background(revokeGrant(deps, grantId));
    if (input.refreshToken) deps.background(revokeFamily(deps, grantLocator(grantId), grantId));
    throw error;
  }
}

/**
 * `grant_type=authorization_code` in two waves (issue 48, "Round trips"): the code is consumed first (atomically, see
 * `consumeCode`), its user read in the same D1 batch; then every binding is
 * checked: the client it was issued to, the exact redirect URI, the PKCE verifier (RFC 7636; a verifier without a
 * challenge is refused too, RFC 9700 §2.1.1), and that the user is still enabled. A failed check has burnt the code.
 * Then the grant is written beside its refresh-token family's start (`createGrant`). A fault from there on (the 503
 * the client retries) removes the grant and puts the code back (`putBackCode`): the retry redeems it, where it used to
 * read as a replay and revoke a grant no answer had carried.
 * `resource` may narrow the token to some of the resources the user allowed (RFC 8707 §2.2).
 */
async function exchangeCode(
  deps: Deps,
  client: OAuth2ClientRow,
  params: OAuth2Params,
  binding: TokenBinding,
) {
  const code = param(params, "code", 200);
  if (!code) throw new OAuth2Error("invalid_request", "code is required");
  const asked = askedDetails(client, params);
  const row = await consumeCode(deps, code, (db, codeHash, grantId) => [
    userOfTakenCode(db, codeHash, grantId),
  ]);
  const mismatch = (what: string) => new OAuth2Error("invalid_grant", what);
  if (row.clientId !== client.clientId) throw mismatch("the code was issued to another client");
  // A FedCM code (fedcm.ts) had no redirect URI: its exchange names none either (RFC 6749 §4.1.3).
  if ((param(params, "redirect_uri") ?? "") !== row.redirectUri) {
    throw mismatch("redirect_uri differs from the one of the authorization request");
  }
  const verifier = params.get("code_verifier");
  if (row.codeChallenge) {
    if (!verifier || !(await verifierMatches(verifier, row.codeChallenge))) {
      throw mismatch("code_verifier does not match the code challenge");
    }
  } else if (verifier !== undefined) {
    throw mismatch("code_verifier sent, but the authorization request had no code challenge");
  }
  // RFC 9449 §10: a code bound to a key (`dpop_jkt`, or a proof at the PAR endpoint) is redeemed with that key's proof.
  if (row.dpopJkt && !binding.dpopJkt) throw mismatch("the code is bound to a DPoP key: send a DPoP proof");
  if (row.dpopJkt && row.dpopJkt !== binding.dpopJkt) {
    throw new OAuth2Error(
      "invalid_dpop_proof",
      "the code is bound to another DPoP key (dpop_jkt) than the proof's",
    );
  }
  const resources = narrowedResources(row.resources, params.resources);
  // RFC 9396 §6.1: the same details as approved, or fewer; more is refused before the grant is made.
  const authorizationDetails = narrowAuthorizationDetails(row.authorizationDetails, asked);
  const user = (row.alongside[0] as UserRow[])[0];
  if (!user || user.disabled) throw mismatch("the user is disabled");
  return onFaultPutBack({ putBack: putBackCode(row) }, async () => {
    const { grant, refreshToken } = await createGrant(deps, client, row.codeHash, row.grantId, binding);
    return tokensOfNewGrant(deps, {
      client,
      user,
      grant,
      scopes: grant.scopes,
      resources,
      refreshToken,
      nonce: row.nonce,
      dpopJkt: binding.dpopJkt,
      authorizationDetails,
    });
  });
}

/** `grant_type=refresh_token`: rotation (see `rotateRefreshToken`); `scope` and `resource` may only narrow. */
async function refresh(deps: Deps, client: OAuth2ClientRow, params: OAuth2Params, binding: TokenBinding) {
  if (!issuesRefreshTokens(client)) {
    throw new OAuth2Error("unauthorized_client", "this client may not use refresh tokens");
  }
  const presented = param(params, "refresh_token", 200);
  if (!presented) throw new OAuth2Error("invalid_request", "refresh_token is required");
  const asked = params.has("scope") ? scopeList(param(params, "scope", 1000)) : undefined;
  const details = askedDetails(client, params);
  const { grant, user, refreshToken } = await rotateRefreshToken(deps, client, presented, {
    scopes: asked,
    resources: params.resources,
    dpopJkt: binding.dpopJkt,
    authorizationDetails: details,
  });
  const resources = narrowedResources(grant.resources, params.resources);
  return tokensFor(deps, {
    client,
    user,
    grant,
    scopes: asked ?? grant.scopes,
    resources,
    refreshToken,
    dpopJkt: binding.dpopJkt,
    // RFC 9396 §6.1: the grant's details (checked before rotating: never wider), or the fewer asked for this token.
    authorizationDetails: narrowAuthorizationDetails(grant.authorizationDetails, details),
  });
}

/**
 * The device grant (RFC 8628) and the CIBA grant (OpenID CIBA Core §10.1, §11): tokens for the person who approved on
 * the page, once; a CIBA client confined to an organization gets it in its tokens. A CIBA request's authorization
 * details (RFC 9396) are what the person approved: the token request may ask for fewer, never more. The device flow
 * takes none (docs/agents.md): asking for some there is asking for more. A fault from the approved row's claim on (its
 * own lost answer, the approver's read, the grant's writes, the tokens) puts the row back (`putBackApproved`): the next
 * poll redeems it. An answer or a refusal spends it: the claimed row is deleted after the answer.
 */
const exchangePolled = (kind: "device" | "ciba") =>
  async function exchangeDeviceCode(
    deps: Deps,
    client: OAuth2ClientRow,
    params: OAuth2Params,
    binding: TokenBinding,
  ) {
    const details = askedDetails(client, params);
    if (kind === "device" && details) narrowAuthorizationDetails(null, details);
    const claimed = await redeemPolled(deps, client, params, kind);
    const approved = claimed.row;
    return spentUnlessPutBack(deps.background, "device authorization", claimed, async () => {
      const authorizationDetails = narrowAuthorizationDetails(approved.authorizationDetails, details);
      const user = await findUserById(deps.shards, approved.userId);
      if (!user || user.disabled) throw new OAuth2Error("invalid_grant", "the user is disabled");
      const { grant, refreshToken } = await createGrantFor(deps, client, {
        userId: user.id,
        scopes: approved.scopes,
        resources: approved.resources,
        authTime: approved.authTime,
        acr: approved.acr,
        amr: approved.amr,
        sid: approved.sid,
        dpopJkt: binding.dpopJkt,
        orgId: approved.orgId,
        // The grant keeps all that was approved: a later refresh may narrow from it, never widen.
        authorizationDetails: approved.authorizationDetails,
      });
      return tokensOfNewGrant(deps, {
        client,
        user,
        grant,
        scopes: grant.scopes,
        resources: grant.resources,
        refreshToken,
        dpopJkt: binding.dpopJkt,
        authorizationDetails,
      });
    });
  };

/**
 * Scopes about a person (and `graphql`, which acts as one): a client acting for itself has none of them, and no
 * refresh or ID token. What its token carries is its identity (`sub`) and the resources it is for (`aud`).
 */
const USER_SCOPES = new Set(["openid", "profile", "email", "phone", "offline_access", "graphql"]);

/**
 * `grant_type=client_credentials` (RFC 6749 §4.4): a confidential client acting for itself. The token's subject is the
 * client, its scopes are the client's (less those about a person), its audience the resources asked for.
 */
async function clientCredentials(
  deps: Deps,
  client: OAuth2ClientRow,
  params: OAuth2Params,
  binding: TokenBinding,
) {
  if (client.tokenEndpointAuthMethod === "none") {
    throw new OAuth2Error("unauthorized_client", "a public client cannot act for itself: it has no secret");
  }
  const own = client.scopes.filter((scope) => !USER_SCOPES.has(scope));
  const asked = params.has("scope") ? scopeList(param(params, "scope", 1000)) : own;
  const outside = asked.filter((scope) => !own.includes(scope));
  if (outside.length > 0)
    throw new OAuth2Error("invalid_scope", `scope not available to this client: ${outside.join(" ")}`);
  const resources = requestedResources(deps.config, client, params.resources);
  // RFC 9396 §6: a client acting for itself may ask for details of its types, which its token then carries.
  const authorizationDetails = askedDetails(client, params);
  const accessToken = await signOAuth2AccessToken({
    config: deps.config,
    client,
    user: null,
    scopes: asked,
    resources,
    dpopJkt: binding.dpopJkt,
    authorizationDetails,
    now: deps.now(),
  });
  return {
    access_token: accessToken,
    token_type: "Bearer" as const,
    expires_in: client.accessTokenLifetime,
    scope: asked.join(" "),
    ...(authorizationDetails ? { authorization_details: authorizationDetails } : {}),
  };
}

const HANDLERS: Record<
  (typeof GRANT_TYPES)[number],
  // `binding`: the request's DPoP key (RFC 9449), for the access token's `cnf.jkt` (see `tokenRequest`).
  (
    deps: Deps,
    client: OAuth2ClientRow,
    params: OAuth2Params,
    binding: TokenBinding,
  ) => Promise<TokenResponse | ProviderTokenResponse>
> = {
  authorization_code: exchangeCode,
  refresh_token: refresh,
  [DEVICE_GRANT]: exchangePolled("device"),
  [CIBA_GRANT]: exchangePolled("ciba"),
  client_credentials: clientCredentials,
  // `audience=provider:<name>`: the token vault's exchange (vault-exchange.ts), for a provider's token.
  [TOKEN_EXCHANGE_GRANT]: (deps, client, params, binding) =>
    asksForProviderToken(params)
      ? exchangeForProviderToken(deps, client, params, binding)
      : exchangeToken(deps, client, params, binding),
  [JWT_BEARER_GRANT]: jwtBearer,
};

/**
 * A token request of an authenticated client. `binding` is the key of the request's DPoP proof (dpop.ts
 * `tokenRequestBinding`); every handler's answer goes through `boundAnswer`, which sets `token_type` and refuses an
 * answer whose access token does not carry that key.
 */
export async function tokenRequest(
  deps: Deps,
  client: OAuth2ClientRow,
  params: OAuth2Params,
  binding: TokenBinding = UNBOUND,
): Promise<TokenResponse | ProviderTokenResponse> {
  const grantType = params.get("grant_type");
  if (!grantType) throw new OAuth2Error("invalid_request", "grant_type is required");
  const handler = Object.hasOwn(HANDLERS, grantType)
    ? HANDLERS[grantType as keyof typeof HANDLERS]
    : undefined;
  if (!handler)
    throw new OAuth2Error("unsupported_grant_type", `grant_type must be one of ${GRANT_TYPES.join(", ")}`);
  if (!client.grantTypes.includes(grantType)) {
    throw new OAuth2Error("unauthorized_client", `this client may not use ${grantType}`);
  }
  const raw = await handler(deps, client, params, binding);
  // A provider's token is the provider's: not ours to bind, and no JWT of ours to look into.
  const answer = FOREIGN_TOKEN in raw ? raw : boundAnswer(raw, binding);
  noteClientUse(deps, client);
  // A metadata-document client whose document was fetched again: its row and KV mark are refreshed, after the answer.
  // Awaited, their failure answered 503 after the grant was made and the code (or assertion, or approval) spent: the
  // retry read as a replay. Not kept, the next request fetches the document again.
  deps.background(keepFetchedClient(deps, client), "client metadata document kept");
  return answer;
}
