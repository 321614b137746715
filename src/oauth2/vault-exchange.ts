import type { OAuth2ClientRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { type Refusal, releaseProviderToken } from "../vault";
import type { TokenBinding } from "./dpop";
import { OAuth2Error } from "./errors";
import { type OAuth2Params, param, scopeList } from "./params";
import { ACCESS_TOKEN_TYPE, checkExchangeRequest, subjectOf } from "./token-exchange";

/**
 * The token vault's side of the token exchange (RFC 8693; contract operators.md §3): `audience=provider:<name>`
 * asks for the provider's current access token of the subject token's user, kept by the vault (src/vault/). The
 * subject token must be one this server issued to the asking client itself, for its user, straight from the user's
 * grant: no first-party session token or old system's token (neither is an OAuth2 access token here), no token some
 * other client passed on (`aud`), no exchanged or impersonation token (`act`: someone else acts already), and a
 * DPoP-bound one only with a proof by its key.
 *
 * The answer is the provider's token, not ours: it cannot be bound to the client's DPoP key, so it is `Bearer`
 * whatever the request carried, with the provider's expiry, and `scope` the scopes the provider granted.
 */

export const PROVIDER_AUDIENCE_PREFIX = "provider:";

/** Marks an answer carrying another server's token: `tokenRequest` must not read it as one of ours. */
export const FOREIGN_TOKEN: unique symbol = Symbol("a provider's token");

export interface ProviderTokenResponse {
  access_token: string;
  issued_token_type: typeof ACCESS_TOKEN_TYPE;
  token_type: "Bearer";
  expires_in?: number;
  scope: string;
  [FOREIGN_TOKEN]: true;
}

export const asksForProviderToken = (params: OAuth2Params) =>
  params.get("audience")?.startsWith(PROVIDER_AUDIENCE_PREFIX) === true;

/** RFC 8693 §2.2.2 for each refusal: the target (`invalid_target`), the grant (`invalid_grant`), or the provider. */
function refusalError(refusal: Refusal, provider: string): OAuth2Error {
  switch (refusal) {
    case "unavailable-provider":
      return new OAuth2Error("invalid_target", `no token vault for the provider ${provider} here`);
    case "client-not-allowed":
      return new OAuth2Error("invalid_target", `this client may not get tokens of the provider ${provider}`);
    case "no-connection":
    case "no-consent":
      return new OAuth2Error(
        "invalid_grant",
        `the user has not connected ${provider}, or not let this client use the connection`,
      );
    case "expired":
    case "refused":
      return new OAuth2Error(
        "invalid_grant",
        `the user's ${provider} connection has ended: it must be made again`,
      );
    case "service-refused":
      // The service's own registration at the provider (a secret rotated there, the app removed): nothing the agent or
      // the user can do, and no retry helps until the operator fixes it. A 500 that says so, the connection kept.
      return new OAuth2Error(
        "server_error",
        `${provider} refused this service's own client credentials; the connection is kept: the operator must fix the provider's settings`,
        undefined,
        `the token vault's refresh at ${provider}: the provider refused the service's client credentials`,
        500,
      );
    case "scope-not-granted":
      return new OAuth2Error("invalid_scope", `scope wider than what ${provider} granted the connection`);
    case "provider-down":
      // 503 with Retry-After, as every 503 of this endpoint (errors.ts): the stored token is what it was.
      return new OAuth2Error(
        "temporarily_unavailable",
        `${provider} could not be reached to renew the token; try again later`,
        undefined,
        undefined,
        503,
      );
  }
}

export async function exchangeForProviderToken(
  deps: Deps,
  client: OAuth2ClientRow,
  params: OAuth2Params,
  binding: TokenBinding,
): Promise<ProviderTokenResponse> {
  checkExchangeRequest(client, params);
  const provider = param(params, "audience", 100)!.slice(PROVIDER_AUDIENCE_PREFIX.length);
  if (params.resources.length > 0) {
    throw new OAuth2Error(
      "invalid_target",
      "a provider's token is asked with audience alone, without resource",
    );
  }
  const { payload, grant } = await subjectOf(deps, client, params);
  const notIssuedHere = new OAuth2Error(
    "invalid_grant",
    "the subject token must be an access token issued to this client for its user, by no one acting for them",
  );
  if (payload.client_id !== client.clientId || grant.clientId !== client.clientId) throw notIssuedHere;
  if (payload.act !== undefined || payload.amr?.includes("imp")) throw notIssuedHere;
  // RFC 9449 §7.1: a bound token is only good with a proof by its key; whoever holds it alone holds nothing.
  const bound = payload.cnf?.jkt;
  if (bound && binding.dpopJkt !== bound) {
    throw new OAuth2Error(
      "invalid_grant",
      "the subject token is DPoP-bound: the request's DPoP proof must be signed by its key",
    );
  }
  const release = await releaseProviderToken(deps, {
    userId: payload.sub,
    clientId: client.clientId,
    vaultProviders: client.vaultProviders,
    provider,
    grantId: grant.id,
    scopes: scopeList(param(params, "scope", 1000)),
  });
  if (!release.ok) throw refusalError(release.refusal, provider);
  const left = release.expiresAt === null ? undefined : Math.floor((release.expiresAt - deps.now()) / 1000);
  return {
    access_token: release.accessToken,
    issued_token_type: ACCESS_TOKEN_TYPE,
    token_type: "Bearer",
    ...(left !== undefined ? { expires_in: Math.max(left, 1) } : {}),
    scope: release.scopes.join(" "),
    [FOREIGN_TOKEN]: true,
  };
}
