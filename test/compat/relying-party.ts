// Shared by the OAuth2 compatibility tests: a client registered through the admin API, discovered by openid-client,
// and authorization requests with PKCE, state and nonce, as a relying party builds them.
import * as oidc from "openid-client";
import { expect, inject } from "vitest";
import { authUrl } from "./client";

const adminSecret = inject("adminSecret");

export interface RegisteredClient {
  clientId: string;
  clientSecret?: string;
}

export async function registerClient(body: Record<string, unknown>): Promise<RegisteredClient> {
  const response = await fetch(`${authUrl}/admin/oauth2/clients`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-hasura-admin-secret": adminSecret },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as RegisteredClient;
}

/** openid-client's configuration from discovery; plain http is allowed because `wrangler dev` serves http. */
export function discover(client: RegisteredClient, auth: oidc.ClientAuth): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(authUrl), client.clientId, undefined, auth, {
    execute: [oidc.allowInsecureRequests],
  });
}

/** An authorization URL with a fresh PKCE verifier, state and nonce, and what the callback is checked against. */
export async function authorizationRequest(
  config: oidc.Configuration,
  redirectUri: string,
  scope: string,
  extra: Record<string, string> = {},
) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    nonce,
    ...extra,
  });
  return { url, checks: { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce } };
}

/** The pending request an authorization URL leads to: the request id of the redirect to the login step. */
export async function pendingRequestOf(authorizationUrl: URL): Promise<string> {
  const toLogin = await fetch(authorizationUrl, { redirect: "manual" });
  expect(toLogin.status, await toLogin.clone().text()).toBe(302);
  return new URL(toLogin.headers.get("location")!).searchParams.get("request_id")!;
}

/** The login step completed with the person's access token (contract §3.5); where the browser goes next. */
export async function completeLoginStep(requestId: string, accessToken: string): Promise<URL> {
  const completed = await fetch(`${authUrl}/oauth2/login`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${accessToken}` },
    body: JSON.stringify({ requestId }),
  });
  expect(completed.status).toBe(200);
  return new URL(((await completed.json()) as { redirectUri: string }).redirectUri);
}
