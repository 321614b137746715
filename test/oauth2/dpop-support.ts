// Shared by the DPoP tests (dpop, dpop-attacks, conformance/fapi2-dpop): openid-client pointed at the service through
// its HTTP surface, the code flow driven with it, and hand-made DPoP proofs (jose) for what a library would never send.
import {
  base64url,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  type JWK,
  type JWTPayload,
  SignJWT,
} from "jose";
import * as oidc from "openid-client";
import { expect } from "vitest";
import type { WireClient } from "../../src/oauth2/clients";
import type { TestService, WireSession } from "../helpers";
import { ISSUER, REDIRECT_URI, requestIdOf } from "./support";

export const TOKEN_ENDPOINT = `${ISSUER}/oauth2/token`;
export const USERINFO_ENDPOINT = `${ISSUER}/oauth2/userinfo`;
export const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

/**
 * openid-client's fetch, sent through `svc.request` (so every answer is checked against the OpenAPI document);
 * `seen` collects the status and `error` of every answer, to show what the library retried.
 */
export function fetchThrough(
  svc: TestService,
  seen: { status: number; error?: string }[] = [],
): oidc.CustomFetch {
  return async (url, options) => {
    const response = await svc.request(options.method, url, {
      headers: options.headers,
      body: options.body as BodyInit | undefined,
    });
    const type = response.headers.get("content-type") ?? "";
    const error = type.includes("json")
      ? ((await response.clone().json()) as { error?: string }).error
      : undefined;
    seen.push({ status: response.status, ...(error ? { error } : {}) });
    return response;
  };
}

/** An openid-client configuration for `client`, by discovery of the issuer (http on localhost: insecure allowed). */
export async function relyingParty(
  svc: TestService,
  client: WireClient,
  seen?: { status: number; error?: string }[],
  clientAuth?: oidc.ClientAuth,
): Promise<oidc.Configuration> {
  const fetcher = fetchThrough(svc, seen);
  const auth =
    clientAuth ?? (client.clientSecret ? oidc.ClientSecretBasic(client.clientSecret) : oidc.None());
  const config = await oidc.discovery(new URL(ISSUER), client.clientId, undefined, auth, {
    execute: [oidc.allowInsecureRequests],
    [oidc.customFetch]: fetcher,
  });
  config[oidc.customFetch] = fetcher;
  return config;
}

/** A DPoP key pair for openid-client, and its thumbprint. */
export async function dpopKeyPair(alg = "ES256") {
  const pair = await oidc.randomDPoPKeyPair(alg);
  const jkt = await calculateJwkThumbprint(await exportJWK(pair.publicKey));
  return { pair, jkt };
}

/**
 * The code flow with openid-client up to the callback: the authorization URL (PKCE, state, `extra` parameters such as
 * `dpop_jkt`), the login step with the user's session, the redirect back. Returns what `authorizationCodeGrant` takes.
 */
export async function callbackOf(
  svc: TestService,
  config: oidc.Configuration,
  session: WireSession,
  extra: Record<string, string> = {},
  scope = "openid profile email offline_access",
) {
  const pkceCodeVerifier = oidc.randomPKCECodeVerifier();
  const expectedState = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(pkceCodeVerifier),
    code_challenge_method: "S256",
    state: expectedState,
    ...extra,
  });
  const requestId = await requestIdOf(await svc.request("GET", url.href));
  const response = await svc.post("/oauth2/login", { requestId }, session.accessToken);
  expect(response.status).toBe(200);
  const callback = new URL(((await response.json()) as { redirectUri: string }).redirectUri);
  return { callback, checks: { pkceCodeVerifier, expectedState } };
}

/** A key of our own for hand-made proofs: its private key, its public JWK and thumbprint. */
export async function proofKey(alg = "ES256") {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { alg, privateKey, jwk, jkt: await calculateJwkThumbprint(jwk) };
}

export type ProofKey = Awaited<ReturnType<typeof proofKey>>;

/** One key for both: openid-client's DPoP handle (`pair`) and hand-made proofs (`key`). */
export async function sharedKey(alg = "ES256") {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  const key: ProofKey = { alg, privateKey, jwk, jkt: await calculateJwkThumbprint(jwk) };
  return { pair: { privateKey, publicKey } as CryptoKeyPair, key };
}

/** base64url(SHA-256(token)): the `ath` of a proof sent with an access token (RFC 9449 §4.2). */
export async function ath(accessToken: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(accessToken));
  return base64url.encode(new Uint8Array(digest));
}

/**
 * A DPoP proof signed by `key`: by default a valid one for `htm` and `htu` now; `claims` and `header` add or replace
 * (undefined removes) members, to make the broken proofs the attacks need.
 */
export async function proof(
  key: ProofKey,
  htm: string,
  htu: string,
  options: { claims?: Record<string, unknown>; header?: Record<string, unknown>; accessToken?: string } = {},
): Promise<string> {
  const claims: JWTPayload = {
    htm,
    htu,
    iat: Math.floor(Date.now() / 1000),
    jti: crypto.randomUUID(),
    ...(options.accessToken ? { ath: await ath(options.accessToken) } : {}),
    ...options.claims,
  };
  const header: Record<string, unknown> = { typ: "dpop+jwt", alg: key.alg, jwk: key.jwk, ...options.header };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  return new SignJWT(claims).setProtectedHeader(header as { alg: string; jwk?: JWK }).sign(key.privateKey);
}
