import { createLocalJWKSet, type JSONWebKeySet, errors as joseErrors, jwtVerify } from "jose";
import * as oauth from "oauth4webapi";
import type { SsoConnectionRow } from "../db/schema";
import { AppError, UnavailableError } from "../errors";
import type { Deps } from "../http/deps";
import { decrypt } from "../lib/crypto";
import { answerSaysDown, answerStatus } from "../lib/oauth-answer-status";
import { type OidcSettings, oidcCallbackUrl } from "./connections";
import { discover, keySet } from "./oidc-discovery";
import type { PendingSsoRequest, SsoIdentity } from "./requests";

/**
 * OIDC connections (contract organizations.md §2) on oauth4webapi: authorization code with PKCE (S256), `state` (our
 * pending request, ./requests.ts) and `nonce`; the token answer and its ID token checked by oauth4webapi (issuer,
 * audience, azp, nonce, exp/iat: OIDC Core §3.1.3.7), and the ID token's signature by jose against the IdP's JWKS —
 * oauth4webapi leaves it unchecked for a token fetched straight from the token endpoint over TLS (§3.1.3.7 item 6),
 * but a connection's token endpoint is whatever its discovery says, so the signature is what ties it to the issuer.
 */

const TIMEOUT_MS = 10_000;
const SIGNING_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"];

const settingsOf = (connection: SsoConnectionRow) => connection.settings as unknown as OidcSettings;

function httpOptions(deps: Deps, url: string) {
  return {
    [oauth.customFetch]: deps.outbound,
    // Plain http only where the outbound-URL policy let it through: loopback in development and tests.
    [oauth.allowInsecureRequests]: url.startsWith("http:"),
    signal: () => AbortSignal.timeout(TIMEOUT_MS),
  };
}

export interface OidcStart {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** The email the person typed: the IdP may prefill it (OIDC Core §3.1.2.1 `login_hint`). */
  loginHint?: string;
}

/** The IdP's authorization URL for this sign-in. */
export async function oidcAuthorizationUrl(
  deps: Deps,
  connection: SsoConnectionRow,
  start: OidcStart,
): Promise<string> {
  const settings = settingsOf(connection);
  const as = await discover(deps, settings.issuer);
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", settings.clientId);
  url.searchParams.set("redirect_uri", oidcCallbackUrl(deps, connection.id));
  url.searchParams.set("scope", settings.scopes.join(" "));
  url.searchParams.set("state", start.state);
  url.searchParams.set("nonce", start.nonce);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(start.codeVerifier));
  url.searchParams.set("code_challenge_method", "S256");
  if (start.loginHint) url.searchParams.set("login_hint", start.loginHint);
  return url.href;
}

const refused = (reason: string) =>
  new AppError("sso-assertion-invalid", "the identity provider's answer could not be verified", reason);

function clientAuthFor(as: oauth.AuthorizationServer, secret: string): oauth.ClientAuth {
  const methods = as.token_endpoint_auth_methods_supported;
  return methods && !methods.includes("client_secret_basic") && methods.includes("client_secret_post")
    ? oauth.ClientSecretPost(secret)
    : oauth.ClientSecretBasic(secret);
}

/**
 * The ID token's signature and claims once more, by jose, against the IdP's keys (one refetch on an unknown key).
 * Also the check of a custom provider's ID token (src/providers/custom-endpoints.ts), whose endpoints are as untrusted.
 */
export async function verifySignature(
  deps: Deps,
  as: oauth.AuthorizationServer,
  clientId: string,
  idToken: string,
) {
  const verify = async (fresh: boolean) =>
    jwtVerify(idToken, createLocalJWKSet((await keySet(deps, as.jwks_uri!, fresh)) as JSONWebKeySet), {
      issuer: as.issuer,
      audience: clientId,
      algorithms: SIGNING_ALGORITHMS,
      currentDate: new Date(deps.now()),
      clockTolerance: 60,
    });
  try {
    return (await verify(false)).payload;
  } catch (error) {
    if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw error;
    return (await verify(true)).payload;
  }
}

function identityOf(claims: Record<string, unknown>): SsoIdentity {
  const verified = claims.email_verified;
  const groups = Array.isArray(claims.groups)
    ? claims.groups.filter((group): group is string => typeof group === "string").slice(0, 200)
    : undefined;
  return {
    subject: String(claims.sub ?? ""),
    email: typeof claims.email === "string" ? claims.email : "",
    // Some IdPs send the string "true" (Cognito did); anything else that is not true is an explicit no.
    ...(verified === undefined ? {} : { emailVerified: verified === true || verified === "true" }),
    ...(typeof claims.name === "string" ? { displayName: claims.name } : {}),
    ...(groups ? { groups } : {}),
  };
}

/**
 * The callback: the code exchanged (with the request's PKCE verifier) and the ID token checked; the identity it
 * asserts. The IdP's error, a wrong issuer, audience, nonce, signature or an expired token: 400
 * `sso-assertion-invalid` (the reason logged); the IdP unreachable, slow, or answering 5xx or 429: 503.
 */
export async function oidcIdentity(
  deps: Deps,
  connection: SsoConnectionRow,
  request: PendingSsoRequest,
  params: URLSearchParams,
): Promise<SsoIdentity> {
  const settings = settingsOf(connection);
  const as = await discover(deps, settings.issuer);
  const client: oauth.Client = { client_id: settings.clientId };
  try {
    // The state was matched already: it found the pending request. `iss`, when the IdP sends it, is checked (RFC 9207).
    const callback = oauth.validateAuthResponse(as, client, params, oauth.skipStateCheck);
    const secret = await decrypt(deps.config.secrets.encryptionKey, settings.clientSecretSealed);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuthFor(as, secret),
      callback,
      oidcCallbackUrl(deps, connection.id),
      request.codeVerifier ?? "",
      httpOptions(deps, as.token_endpoint!),
    );
    const answer = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: request.nonce ?? "",
      requireIdToken: true,
    });
    const claims = await verifySignature(deps, as, settings.clientId, answer.id_token!);
    return identityOf(claims);
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (error instanceof oauth.AuthorizationResponseError) {
      throw new AppError(
        "oauth-provider-error",
        `the identity provider said: ${error.error}`.slice(0, 200),
        error.error_description,
      );
    }
    // The IdP answering "not now" (5xx, 429, temporarily_unavailable) is down, not refusing: 503, retried.
    if (answerSaysDown(error)) {
      throw new UnavailableError(
        `identity provider token endpoint: ${answerStatus(error)} ${(error as Error).name}`,
      );
    }
    if (
      error instanceof oauth.ResponseBodyError ||
      error instanceof oauth.WWWAuthenticateChallengeError ||
      error instanceof oauth.OperationProcessingError
    ) {
      throw refused(`${error.name}: ${error.message}`);
    }
    if (error instanceof joseErrors.JOSEError) throw refused(`${error.code}: ${error.message}`);
    const name = (error as Error)?.name;
    if (name === "TimeoutError" || name === "AbortError" || error instanceof TypeError) {
      throw new UnavailableError(`identity provider token endpoint: ${name}`);
    }
    throw error;
  }
}
