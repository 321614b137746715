import type { OAuth2ClientRow } from "../db/schema";
import type { Deps } from "../http/deps";
import type { VerifiedAssertion } from "./assertion-issuers";
import { OAuth2Error } from "./errors";
import { type OAuth2Params, param, scopeList } from "./params";
import { narrowedResources, requestedResources } from "./resources";

/**
 * The Identity Assertion JWT Authorization Grant (ID-JAG, draft-ietf-oauth-identity-assertion-authz-grant §4.4), the
 * grant behind MCP's enterprise-managed authorization: an enterprise IdP the client trusts (`trustedIssuers`) says
 * "this user lets this client reach this resource with these scopes", and this server, as the resource's
 * authorization server, turns it into an access token without a consent screen. What every assertion must be is
 * checked in assertion-issuers.ts; this file reads what an ID-JAG says and holds the request to it.
 */

export interface AssertionTarget {
  scopes: string[];
  resources: string[];
}

/** The `resource` claim (RFC 8707 §2 identifiers): one URI or several. */
function resourceClaim(value: unknown): string[] {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  if (list.length > 10 || !list.every((item) => typeof item === "string")) {
    throw new OAuth2Error("invalid_grant", "the assertion's resource claim is not a URI or a list of them");
  }
  return list as string[];
}

/**
 * §4.4.1: the `client_id` claim names the client that authenticated this request (a grant issued for one client is
 * worth nothing to another, which is why the IdP names it); the token is for the asserted `resource`, each one the
 * client may reach here (`invalid_target` otherwise), narrowed by the request's `resource`; its scopes are the
 * asserted ones (or the client's, when the IdP names none) that the client may have (RFC 6749 §3.3: a server may
 * issue fewer and says so), narrowed by the request's `scope` — a request wider than the assertion is `invalid_scope`.
 */
export function idJagTarget(
  deps: Deps,
  client: OAuth2ClientRow,
  assertion: VerifiedAssertion,
  params: OAuth2Params,
): AssertionTarget {
  const { claims } = assertion;
  if (claims.client_id !== client.clientId) {
    throw new OAuth2Error("invalid_grant", "the ID-JAG was issued for another client (client_id)");
  }
  const asserted = requestedResources(deps.config, client, resourceClaim(claims.resource));
  const resources = narrowedResources(asserted, params.resources);
  if (claims.scope !== undefined && typeof claims.scope !== "string") {
    throw new OAuth2Error("invalid_grant", "the assertion's scope claim is not a string");
  }
  const ceiling =
    claims.scope === undefined
      ? client.scopes
      : scopeList(claims.scope).filter((scope) => client.scopes.includes(scope));
  return { resources, scopes: narrowedScopes(ceiling, params) };
}

/**
 * A plain JWT bearer assertion (RFC 7523 §2.1) says who, not what: the scopes are the request's, within the client's
 * (all of them when it names none), and the resources the request's, among those the client may reach.
 */
export function assertionTarget(deps: Deps, client: OAuth2ClientRow, params: OAuth2Params): AssertionTarget {
  return {
    resources: requestedResources(deps.config, client, params.resources),
    scopes: narrowedScopes(client.scopes, params),
  };
}

/** The request's `scope` within `ceiling` (all of it when the request names none); a wider one is `invalid_scope`. */
function narrowedScopes(ceiling: string[], params: OAuth2Params): string[] {
  if (!params.has("scope")) return ceiling;
  const asked = scopeList(param(params, "scope", 1000));
  const outside = asked.filter((scope) => !ceiling.includes(scope));
  if (outside.length > 0) {
    throw new OAuth2Error(
      "invalid_scope",
      `scope not granted by the assertion: ${outside.join(" ").slice(0, 200)}`,
    );
  }
  return asked;
}
