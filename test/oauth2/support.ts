// Shared by the authorization-server tests: a service with the provider on, clients made through the admin API,
// and the steps of the code flow through the real HTTP surface.
import { env } from "cloudflare:test";
import { expect } from "vitest";
import type { WireClient } from "../../src/oauth2/clients";
import { NO_VERIFICATION, SERVER, service, signUp, type TestService, type WireSession } from "../helpers";

export const PROVIDER_ON = { AUTH_OAUTH2_PROVIDER_ENABLED: "true", ...NO_VERIFICATION };
export const ISSUER = `${SERVER}/auth/v1`;
export const REDIRECT_URI = "https://rp.example.com/callback";
export const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

export function provider(overrides: Record<string, unknown> = {}): TestService {
  return service({ ...PROVIDER_ON, ...overrides });
}

export async function newClient(svc: TestService, body: Record<string, unknown> = {}): Promise<WireClient> {
  const response = await svc.request("POST", "/admin/oauth2/clients", {
    headers: ADMIN,
    json: {
      clientName: "Relying Party",
      redirectUris: [REDIRECT_URI],
      scopes: ["openid", "profile", "email", "phone", "offline_access", "graphql"],
      ...body,
    },
  });
  expect(response.status).toBe(201);
  return (await response.json()) as WireClient;
}

export function form(values: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value !== undefined) params.set(name, value);
  return params.toString();
}

export function postForm(
  svc: TestService,
  path: string,
  values: Record<string, string | undefined>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return svc.request("POST", path, {
    body: form(values),
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
  });
}

export const basic = (client: WireClient, secret = client.clientSecret!) => ({
  authorization: `Basic ${btoa(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(secret)}`)}`,
});

export async function s256(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return btoa(String.fromCharCode(...new Uint8Array(digest)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

export const VERIFIER = "v".repeat(20) + crypto.randomUUID().replace(/-/g, "");

export interface AuthorizeParams {
  scope?: string;
  state?: string;
  nonce?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  prompt?: string;
  max_age?: string;
  redirect_uri?: string;
  response_type?: string;
  [name: string]: string | undefined;
}

/** GET /oauth2/authorize; returns the answer without following it. */
export function authorize(
  svc: TestService,
  client: WireClient,
  params: AuthorizeParams = {},
): Promise<Response> {
  return svc.request(
    "GET",
    `/oauth2/authorize?${form({
      client_id: client.clientId,
      redirect_uri: REDIRECT_URI,
      response_type: "code",
      scope: "openid profile email",
      state: "st-1",
      nonce: "n-1",
      ...params,
    })}`,
  );
}

export function location(response: Response): URL {
  expect(response.status, `expected a redirect, got ${response.status}`).toBeGreaterThanOrEqual(300);
  return new URL(response.headers.get("location")!);
}

/** The request id the authorize endpoint handed to the login UI. */
export async function requestIdOf(response: Response): Promise<string> {
  const url = location(response);
  const id = url.searchParams.get("request_id");
  expect(id).toBeTruthy();
  return id!;
}

/** Authorize, then complete the request through the JSON login step with the user's session; returns the code. */
export async function codeFor(
  svc: TestService,
  client: WireClient,
  session: WireSession,
  params: AuthorizeParams = {},
): Promise<{ code: string; redirect: URL }> {
  const requestId = await requestIdOf(await authorize(svc, client, params));
  const response = await svc.post("/oauth2/login", { requestId }, session.accessToken);
  expect(response.status).toBe(200);
  const redirect = new URL(((await response.json()) as { redirectUri: string }).redirectUri);
  return { code: redirect.searchParams.get("code")!, redirect };
}

export interface TokenAnswer {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token?: string;
  id_token?: string;
  scope: string;
}

export async function exchange(
  svc: TestService,
  client: WireClient,
  code: string,
  extra: Record<string, string> = {},
): Promise<Response> {
  return postForm(
    svc,
    "/oauth2/token",
    {
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      ...(client.clientSecret ? {} : { client_id: client.clientId }),
      ...extra,
    },
    client.clientSecret ? basic(client) : {},
  );
}

/** A user, a client and a first token answer through the whole code flow with PKCE. */
export async function grantFor(
  svc: TestService,
  client?: WireClient,
  scope = "openid profile email offline_access",
) {
  const rp = client ?? (await newClient(svc));
  const session = await signUp(svc);
  const { code } = await codeFor(svc, rp, session, {
    scope,
    code_challenge: await s256(VERIFIER),
    code_challenge_method: "S256",
  });
  const response = await exchange(svc, rp, code, { code_verifier: VERIFIER });
  expect(response.status).toBe(200);
  return { client: rp, session, tokens: (await response.json()) as TokenAnswer };
}

export async function oauth2Error(response: Response, status: number, error: string) {
  const body = (await response.json()) as { error: string; error_description: string };
  expect({ status: response.status, error: body.error }).toEqual({ status, error });
  expect(body.error_description).toEqual(expect.any(String));
  return body;
}
