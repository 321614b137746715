import { base64url, type JWTPayload, SignJWT } from "jose";
import { type ActiveMembership, hasuraClaims } from "../auth";
import type { Authentication, SignIn } from "../browser/acr";
import type { Config } from "../config";
import type { OAuth2ClientRow, UserRow } from "../db/schema";
import { randomUuid } from "../lib/crypto";
import { HASURA_NAMESPACE, rethrowUnreadable, verifyOwnJwt } from "../signing-keys/jwt";
import { getKeySet } from "../signing-keys/keys";
import type { AuthorizationDetail } from "./authorization-details";
import { scopeClaims } from "./claims";
import { orgHasuraClaims } from "./organizations";
import { audienceOf } from "./resources";

export type { Authentication, SignIn };

/** Whether the token was issued for the client itself (its audience is the client, not a resource). */
export function isForClient(payload: OAuth2AccessTokenPayload): boolean {
  return Array.isArray(payload.aud)
    ? payload.aud.includes(payload.client_id)
    : payload.aud === payload.client_id;
}

/**
 * Tokens of the authorization server (contract §3.5). Access tokens are JWTs of type `at+jwt` (RFC 9068), so that
 * neither this API's own verifier (`typ: JWT`, src/signing-keys/jwt.ts) nor a relying party expecting an ID token takes one
 * for the other. Each names its grant (`grant_id`): introspection and userinfo look the grant up, so revoking it
 * ends its access tokens there at once.
 */
const ACCESS_TOKEN_TYPE = "at+jwt";

/**
 * What a machine's token says about itself (`client_credentials`): `gty` names the grant, as Auth0's tokens do, and
 * `sub` is the client id. A person's token has no `gty`, a `grant_id`, and a user id as `sub`, which never equals a
 * client id (UUIDs against `oc_…` and https URLs): RFC 9068 §2.2 and §5 ask that a client's subject never be taken
 * for a person's. docs/mcp.md tells resource servers to check it.
 */
export const MACHINE_TOKEN_GTY = "client_credentials";

export interface OAuth2AccessTokenPayload extends JWTPayload {
  sub: string;
  client_id: string;
  /** Absent on a `client_credentials` token, whose subject is the client itself. */
  grant_id?: string;
  /** `client_credentials` on a machine's token; absent on a person's. */
  gty?: typeof MACHINE_TOKEN_GTY;
  scope: string;
  /** The organization the user let the client act in (contract organizations.md §1); absent: none. */
  org_id?: string;
  /** RFC 9449 §6.1: the thumbprint of the DPoP key the token is bound to; absent: a bearer token. */
  cnf?: { jkt: string };
  /** RFC 8693 §4.1: the party acting for `sub` (token exchange), nested for a chain of delegations. */
  act?: { sub: string; client_id?: string; act?: unknown };
  /** RFC 9068 §2.2.1 and contract §12: how and when the user signed in. */
  auth_time?: number;
  acr?: string;
  amr?: string[];
  /** RFC 9396 §9.1: the authorization details granted, as approved or narrowed by the token request. */
  authorization_details?: AuthorizationDetail[];
  iat: number;
  exp: number;
}

export interface IssueInput {
  config: Config;
  client: OAuth2ClientRow;
  /** Whom the token is about: a user, or null for the client itself (`client_credentials`, `sub` = the client id). */
  user: UserRow | null;
  /** The grant it is issued under; none for `client_credentials`, which has no user to grant anything. */
  grantId?: string;
  scopes: string[];
  /** RFC 8707 resources: the token's `aud`; none, the client itself. */
  resources: string[];
  /** The grant's organization while the user is an active member of it (oauth2/organizations.ts). */
  org?: ActiveMembership;
  /** RFC 9449: the DPoP key's thumbprint the token is bound to (`cnf.jkt`); absent: a bearer token. */
  dpopJkt?: string | null;
  /** RFC 8693: the actor of an exchanged token (`act`). */
  act?: OAuth2AccessTokenPayload["act"];
  /** How the user signed in (contract §12): `auth_time` (ms), `acr`, `amr`. */
  authentication?: Authentication;
  /** RFC 9396: the authorization details the token carries; absent or empty: none. */
  authorizationDetails?: AuthorizationDetail[] | null;
  now: number;
}

/** The claims of an `Authentication`: `auth_time` in seconds, `acr` and `amr` when known. */
export function authenticationClaims(
  authentication: Authentication,
): Pick<OAuth2AccessTokenPayload, "auth_time" | "acr" | "amr"> {
  return {
    auth_time: Math.floor(authentication.authTime / 1000),
    ...(authentication.acr ? { acr: authentication.acr } : {}),
    ...(authentication.amr?.length ? { amr: authentication.amr } : {}),
  };
}

export async function signOAuth2AccessToken(input: IssueInput): Promise<string> {
  const { config, user, client, grantId, scopes, resources, org, dpopJkt, act, authentication, now } = input;
  const details = input.authorizationDetails;
  const { signer } = await getKeySet(config);
  const iat = Math.floor(now / 1000);
  return new SignJWT({
    client_id: client.clientId,
    ...(grantId ? { grant_id: grantId } : {}),
    ...(user ? {} : { gty: MACHINE_TOKEN_GTY }),
    scope: scopes.join(" "),
    ...(org ? { org_id: org.orgId } : {}),
    ...(dpopJkt ? { cnf: { jkt: dpopJkt } } : {}),
    ...(act ? { act } : {}),
    ...(authentication ? authenticationClaims(authentication) : {}),
    ...(details?.length ? { authorization_details: details } : {}),
    // With `graphql` the token is one a GraphQL engine (Hasura) accepts: the same claims a session token carries,
    // the organization's included.
    ...(user && scopes.includes("graphql")
      ? { [HASURA_NAMESPACE]: hasuraClaims(user, config, org ? orgHasuraClaims(org) : {}) }
      : {}),
  })
    .setProtectedHeader({ alg: signer.alg, kid: signer.kid, typ: ACCESS_TOKEN_TYPE })
    .setIssuer(config.urls.server)
    .setSubject(user?.id ?? client.clientId)
    .setAudience(audienceOf(client.clientId, resources))
    .setIssuedAt(iat)
    .setExpirationTime(iat + client.accessTokenLifetime)
    .setJti(randomUuid())
    .sign(signer.key);
}

/** OIDC Core §3.1.3.6: the left half of SHA-256 of the access token, base64url. */
async function accessTokenHash(accessToken: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(accessToken));
  return base64url.encode(new Uint8Array(digest).slice(0, 16));
}

export async function signIdToken(
  input: Omit<IssueInput, "user" | "resources" | "authentication"> & {
    user: UserRow;
    accessToken: string;
    authentication: Authentication;
    nonce?: string | null;
    /** The browser session at this service the user signed in with (OIDC Front/Back-Channel Logout `sid`). */
    sid?: string | null;
  },
): Promise<string> {
  const { config, user, client, scopes, now, accessToken, authentication, nonce, sid } = input;
  // RS256 whatever signs access tokens: what relying parties expect of an ID token (src/signing-keys/keys.ts, KeySet).
  const { idTokenSigner: signer } = await getKeySet(config);
  const iat = Math.floor(now / 1000);
  return new SignJWT({
    ...scopeClaims(user, scopes),
    ...authenticationClaims(authentication),
    at_hash: await accessTokenHash(accessToken),
    ...(nonce ? { nonce } : {}),
    ...(sid ? { sid } : {}),
  })
    .setProtectedHeader({ alg: signer.alg, kid: signer.kid, typ: "JWT" })
    .setIssuer(config.urls.server)
    .setSubject(user.id)
    .setAudience(client.clientId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + client.accessTokenLifetime)
    .sign(signer.key);
}

/**
 * An access token this server issued to some client: our key and its algorithm, our issuer, type `at+jwt`, unexpired. Whether
 * its grant still stands is the caller's next question (`findLiveGrant`). Null for anything else.
 */
export async function verifyOAuth2AccessToken(
  config: Config,
  token: string,
): Promise<OAuth2AccessTokenPayload | null> {
  if (token.length > 8192) return null;
  try {
    const payload = await verifyOwnJwt(config, token, {
      typ: ACCESS_TOKEN_TYPE,
      requiredClaims: ["sub", "exp", "iat", "aud", "jti"],
    });
    const { client_id, grant_id, scope } = payload;
    if (typeof client_id !== "string" || typeof scope !== "string") return null;
    // A token with no grant is the client's own, and says so in its subject; a person's never does. (`gty` is not
    // required: machine tokens signed before it existed have none.)
    const machine = grant_id === undefined;
    if (machine ? payload.sub !== client_id : typeof grant_id !== "string" || payload.sub === client_id) {
      return null;
    }
    return payload as OAuth2AccessTokenPayload;
  } catch (error) {
    rethrowUnreadable(error);
    return null;
  }
}
