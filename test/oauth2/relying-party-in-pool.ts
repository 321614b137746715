// openid-client 6 inside the workers pool: a relying party whose every request (discovery, PAR, token, userinfo) goes
// through the service's real HTTP surface with `service()` (so each answer is checked against the OpenAPI document),
// and the browser's part of the code flow (authorize, the login step) done by hand; and private_key_jwt's keys and
// hand-made client assertions, for the tests that send what openid-client never would.
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";
import * as oidc from "openid-client";
import { expect } from "vitest";
import type { TestService, WireSession } from "../helpers";
import { ISSUER } from "./support";

/** openid-client's fetch, sent to `svc` instead of the network. */
export function fetchThrough(svc: TestService): oidc.CustomFetch {
  return (url, options) =>
    svc.request(options.method, url, {
      headers: options.headers,
      body: options.body as BodyInit | undefined,
    });
}

/** openid-client's configuration from discovery; plain http because the tests' issuer is http://localhost. */
export function discover(
  svc: TestService,
  clientId: string,
  auth: oidc.ClientAuth,
): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(ISSUER), clientId, undefined, auth, {
    execute: [oidc.allowInsecureRequests],
    [oidc.customFetch]: fetchThrough(svc),
  });
}

/** Fresh PKCE verifier, state and nonce, as openid-client makes them, and the checks the callback is held to. */
export async function flowChecks() {
  const pkceCodeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  return {
    params: {
      code_challenge: await oidc.calculatePKCECodeChallenge(pkceCodeVerifier),
      code_challenge_method: "S256",
      state,
      nonce,
    },
    checks: { pkceCodeVerifier, expectedState: state, expectedNonce: nonce },
  };
}

/** The browser at the authorization URL and through the login step: where it lands back at the client. */
export async function browserThrough(svc: TestService, url: URL, session: WireSession): Promise<URL> {
  const toLogin = await svc.request("GET", url.toString());
  expect(toLogin.status, await toLogin.clone().text()).toBe(302);
  const requestId = new URL(toLogin.headers.get("location")!).searchParams.get("request_id");
  expect(requestId).toBeTruthy();
  const completed = await svc.post("/oauth2/login", { requestId }, session.accessToken);
  expect(completed.status).toBe(200);
  return new URL(((await completed.json()) as { redirectUri: string }).redirectUri);
}

export const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/** A client's signing key: the private half, its public JWK (with `kid`, and `alg` when given) to register. */
export interface KeyPair {
  privateKey: CryptoKey;
  publicJwk: JWK;
  alg: string;
  kid: string;
}

export async function keyPair(
  alg: "PS256" | "ES256" | "Ed25519" | "RS256" = "PS256",
  jwkAlg?: string,
): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = crypto.randomUUID();
  const publicJwk = { ...(await exportJWK(publicKey)), kid, use: "sig", ...(jwkAlg ? { alg: jwkAlg } : {}) };
  return { privateKey, publicJwk, alg, kid };
}

/**
 * A client assertion made by hand (RFC 7523 §3): iss = sub = the client, aud = the issuer, a minute long, a fresh
 * jti; `claims` override what they name (undefined drops a claim), `header` the protected header.
 */
export async function clientAssertion(
  key: KeyPair,
  clientId: string,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload: Record<string, unknown> = {
    iss: clientId,
    sub: clientId,
    aud: ISSUER,
    jti: crypto.randomUUID(),
    iat: now,
    exp: now + 60,
    ...claims,
  };
  for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
  return new SignJWT(payload as JWTPayload)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, ...header })
    .sign(key.privateKey);
}
