import { findUserById } from "../auth";
import type { OAuth2ClientRow, UserRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { onFaultPutBack } from "../lib/put-back";
import { type TrustedIssuer, type VerifiedAssertion, verifyAssertion } from "./assertion-issuers";
import { type TokenBinding, UNBOUND } from "./dpop";
import { OAuth2Error } from "./errors";
import { createGrantFor, revokeGrant } from "./grants";
import { assertionTarget, idJagTarget } from "./id-jag";
import { activeInAnyOrg } from "./organizations";
import { type OAuth2Params, param } from "./params";
import { signOAuth2AccessToken } from "./tokens";

/**
 * `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` (RFC 7523 §2.1), contract §12: an `assertion` JWT from an
 * issuer the client trusts (`trustedIssuers`, admin API), about a user of this service, for an access token of that
 * user for this client. An ID-JAG (`typ: oauth-id-jag+jwt`) is the same grant with more said (id-jag.ts).
 *
 * Who the assertion's `sub` is: this service's user id, and nothing else. An issuer's own subject or its `email` claim
 * would need to be tied to an account here by something the issuer cannot forge: an email claim from an issuer that
 * is not the authority for that address (an IdP whose users type any address, verified or not by it) would hand any
 * account here to whoever has an account there — the nOAuth takeover. SSO connections make that tie for the domains
 * an organization verified (src/sso/jit.ts); a trusted issuer has no such domains, so it names our user ids.
 */

export const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/** A user id's longest form (UUIDs; imported ids are bounded the same). */
const MAX_SUBJECT = 128;

async function subjectUser(deps: Deps, sub: string): Promise<UserRow> {
  const user = sub.length <= MAX_SUBJECT ? await findUserById(deps.shards, sub) : undefined;
  if (!user || user.disabled) {
    throw new OAuth2Error("invalid_grant", "the assertion's subject is not an enabled user of this service");
  }
  return user;
}

/**
 * An admin may narrow whom an issuer speaks for (`users`, `orgs` on the trusted issuer): a partner's IdP trusted for
 * its own people only cannot name anyone else here, however valid its signature. Both lists given: either admits.
 */
async function assertIssuerMayName(deps: Deps, trusted: TrustedIssuer, user: UserRow): Promise<void> {
  if (!trusted.users && !trusted.orgs) return;
  if (trusted.users?.includes(user.id)) return;
  if (trusted.orgs && (await activeInAnyOrg(deps, user.id, trusted.orgs))) return;
  throw new OAuth2Error(
    "invalid_grant",
    "the assertion's subject is not a user this issuer may name",
    undefined,
    `trusted issuer ${trusted.issuer} named ${user.id}, outside its users and orgs`,
  );
}

/**
 * A grant with no refresh token, from the assertion on. It is what the access token names (`grant_id`), so the user
 * or an admin revoking it ends the token at introspection and userinfo, as for any grant; it lives as long as the
 * token (the daily housekeeping removes it after). RFC 7523 §4 and the ID-JAG draft §4.4.3: no refresh token — the
 * client presents a new assertion instead, and the issuer decides again.
 */
function withoutRefresh(client: OAuth2ClientRow): OAuth2ClientRow {
  return { ...client, grantTypes: client.grantTypes.filter((grant) => grant !== "refresh_token") };
}

/** When the user signed in, as the issuer says (`auth_time`), else when it issued the assertion; never in the future. */
function authTimeOf(claims: { auth_time?: unknown; iat?: unknown }, now: number): number {
  const seconds = [claims.auth_time, claims.iat].find((value) => typeof value === "number") as
    | number
    | undefined;
  return seconds === undefined ? now : Math.min(seconds * 1000, now);
}

export async function jwtBearer(
  deps: Deps,
  client: OAuth2ClientRow,
  params: OAuth2Params,
  binding: TokenBinding = UNBOUND,
) {
  // An assertion is a bearer grant: with a public client, anyone holding one could redeem it under the client's id
  // (draft-ietf-oauth-identity-assertion-authz-grant §7.1: confidential clients only).
  if (client.tokenEndpointAuthMethod === "none") {
    throw new OAuth2Error("unauthorized_client", "a public client cannot redeem assertions");
  }
  const assertion = param(params, "assertion", 8192);
  if (!assertion) throw new OAuth2Error("invalid_request", "assertion is required");
  const verified = await verifyAssertion(deps, client, assertion);
  // The jti is claimed: a fault from here on (the 503 the client retries, as it asks) puts the claim back, and the
  // retry with the same assertion redeems it, where it read as a replay and sent the agent back to its IdP though no
  // token was issued. A refusal (a disabled user, one the issuer may not name, a scope) keeps the assertion spent.
  return onFaultPutBack(verified.claimed, () => redeemVerified(deps, client, params, binding, verified));
}

/**
 * What the claimed assertion gives: its target, its user (enabled, and one the issuer may name), a grant and the
 * token naming it.
 */
async function redeemVerified(
  deps: Deps,
  client: OAuth2ClientRow,
  params: OAuth2Params,
  binding: TokenBinding,
  verified: VerifiedAssertion,
) {
  const target = verified.idJag
    ? idJagTarget(deps, client, verified, params)
    : assertionTarget(deps, client, params);
  const user = await subjectUser(deps, verified.claims.sub);
  await assertIssuerMayName(deps, verified.trusted, user);
  const now = deps.now();
  // `acr` and `amr` are not carried over: an issuer's values name its own policies, not the levels this service
  // vouches for (contract §12), and a resource server reading ours must be able to trust them.
  const authTime = authTimeOf(verified.claims, now);
  // Its own insert failing removes it (grants.ts `createGrantFor`); the token failing, it goes here: no answer carries
  // it, and it would stay in the user's authorized apps beside the retry's.
  const { grant } = await createGrantFor(deps, withoutRefresh(client), {
    userId: user.id,
    scopes: target.scopes,
    resources: target.resources,
    authTime,
    dpopJkt: binding.dpopJkt,
  });
  const accessToken = await signOAuth2AccessToken({
    config: deps.config,
    client,
    user,
    grantId: grant.id,
    scopes: target.scopes,
    resources: target.resources,
    authentication: { authTime },
    dpopJkt: binding.dpopJkt,
    now,
  }).catch((error: unknown) => {
    deps.background(revokeGrant(deps, grant.id), "an assertion's grant removed");
    throw error;
  });
  deps.audit({
    type: "oauth2.assertion",
    userId: user.id,
    detail: {
      clientId: client.clientId,
      issuer: verified.trusted.issuer,
      idJag: verified.idJag,
      jti: verified.claims.jti,
      scopes: target.scopes,
      resources: target.resources,
    },
  });
  return {
    access_token: accessToken,
    token_type: "Bearer" as const,
    expires_in: client.accessTokenLifetime,
    scope: target.scopes.join(" "),
  };
}
