import { importPKCS8, SignJWT } from "jose";
import * as oauth from "oauth4webapi";
import type { Deps } from "../http/deps";
import { answerSaysDown, answerStatus } from "../lib/oauth-answer-status";
import type { ProviderSettings } from "./config";
import { type Json, obj, type ProviderProfile } from "./profile";

/**
 * The one OAuth 2.0 / OpenID Connect client every provider goes through, on oauth4webapi (PKCE, nonce, the token
 * answer's and the ID token's checks). Calls leave through `deps.outbound` (tests bind fakes there) and give up
 * after `TIMEOUT_MS`: a provider that hangs becomes the contract's error redirect, not a stuck request.
 */
const TIMEOUT_MS = 10_000;

/** A failed step of the exchange with the provider, named by the contract's code for it (§4). */
export class ProviderStepError extends Error {
  constructor(
    readonly code: "oauth-token-echange-failed" | "oauth-profile-fetch-failed" | "oauth-provider-error",
    readonly detail: string,
    /** The provider refused the grant itself (`invalid_grant`): the token is dead, not the provider down. */
    readonly refused = false,
    /** The provider was not reached, or answered that it cannot serve now: an outage to retry, not a refusal. */
    readonly unavailable = false,
    /**
     * The provider refused this service as its client (`invalid_client`, `unauthorized_client`, RFC 6749 §5.2): the
     * service's own credentials or registration there, which the operator must fix; nothing of the user's is wrong.
     */
    readonly clientRefused = false,
  ) {
    super(detail);
    this.name = "ProviderStepError";
  }
}

function httpOptions(deps: Deps, url: string) {
  return {
    [oauth.customFetch]: deps.outbound,
    // Plain http only where configuration allowed it: loopback (src/providers/config.ts).
    [oauth.allowInsecureRequests]: url.startsWith("http:"),
    signal: () => AbortSignal.timeout(TIMEOUT_MS),
  };
}

/** The provider as oauth4webapi describes it: its endpoints, and this service as its client. */
function parties(settings: ProviderSettings): { as: oauth.AuthorizationServer; client: oauth.Client } {
  return {
    as: {
      issuer: settings.oidc?.issuer ?? new URL(settings.tokenUrl).origin,
      authorization_endpoint: settings.authorizationUrl,
      token_endpoint: settings.tokenUrl,
      userinfo_endpoint: settings.userinfoUrl,
      jwks_uri: settings.oidc?.jwksUrl,
    },
    client: { client_id: settings.clientId },
  };
}

/** Apple's client secret: an ES256 JWT signed with the team's key, valid five minutes (Apple's "client_secret"). */
async function appleClientSecret(settings: ProviderSettings, now: number): Promise<string> {
  const apple = settings.apple!;
  const key = await importPKCS8(apple.privateKey, "ES256");
  const iat = Math.floor(now / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: "ES256", kid: apple.keyId })
    .setIssuer(apple.teamId)
    .setSubject(settings.clientId)
    .setAudience("https://appleid.apple.com")
    .setIssuedAt(iat)
    .setExpirationTime(iat + 300)
    .sign(key);
}

async function clientAuth(deps: Deps, settings: ProviderSettings): Promise<oauth.ClientAuth> {
  const secret = settings.apple ? await appleClientSecret(settings, deps.now()) : settings.clientSecret!;
  return settings.definition.clientAuth === "basic"
    ? oauth.ClientSecretBasic(secret)
    : oauth.ClientSecretPost(secret);
}

export function authorizationUrl(
  settings: ProviderSettings,
  params: {
    redirectUri: string;
    state: string;
    codeChallenge?: string;
    nonce?: string;
    extra?: Record<string, string>;
  },
): string {
  const url = new URL(settings.authorizationUrl);
  const set = (name: string, value: string | undefined) => {
    if (value !== undefined) url.searchParams.set(name, value);
  };
  set("client_id", settings.clientId);
  set("redirect_uri", params.redirectUri);
  set("response_type", "code");
  if (settings.scopes.length > 0)
    set("scope", settings.scopes.join(settings.definition.scopeSeparator ?? " "));
  set("state", params.state);
  if (params.codeChallenge) {
    set("code_challenge", params.codeChallenge);
    set("code_challenge_method", "S256");
  }
  set("nonce", params.nonce);
  for (const [name, value] of Object.entries({
    ...settings.definition.authorizationParams,
    ...params.extra,
  })) {
    set(name, value);
  }
  return url.toString();
}

export interface TokenSet {
  /** The token endpoint's whole answer (some providers put the profile in it). */
  answer: Json;
  accessToken: string;
  refreshToken?: string;
  expiresIn?: number;
  /** The ID token's claims, checked by oauth4webapi: issuer, audience, expiry, nonce. */
  idToken: Json;
}

function tokenSet(answer: oauth.TokenEndpointResponse): TokenSet {
  return {
    answer: answer as unknown as Json,
    accessToken: answer.access_token,
    refreshToken: answer.refresh_token,
    expiresIn: answer.expires_in,
    idToken: (oauth.getValidatedIdTokenClaims(answer) as Json | undefined) ?? {},
  };
}

/**
 * The authorization code for tokens. For an OIDC provider the ID token is required and its claims are checked
 * (issuer, audience, expiry, nonce); it comes straight from the token endpoint over TLS, which OIDC Core §3.1.3.7
 * accepts in place of a signature check.
 */
export async function exchangeCode(
  deps: Deps,
  settings: ProviderSettings,
  input: { code: string; redirectUri: string; codeVerifier?: string; nonce?: string },
): Promise<TokenSet> {
  const { as, client } = parties(settings);
  try {
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      await clientAuth(deps, settings),
      // The state was checked by the service (src/providers/flow.ts); here only the code goes on.
      oauth.validateAuthResponse(as, client, new URLSearchParams({ code: input.code }), oauth.skipStateCheck),
      input.redirectUri,
      input.codeVerifier ?? oauth.nopkce,
      httpOptions(deps, settings.tokenUrl),
    );
    const answer = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: input.nonce ?? oauth.expectNoNonce,
      requireIdToken: settings.oidc !== undefined,
    });
    // A custom provider's token endpoint is not a host this service knows: its ID token's signature is checked too.
    if (settings.checkIdToken) await settings.checkIdToken(answer.id_token!);
    return tokenSet(answer);
  } catch (error) {
    throw new ProviderStepError("oauth-token-echange-failed", describe(error));
  }
}

/** `POST /token/provider/{p}`: the provider's refresh grant with this service's client credentials. */
export async function refreshAtProvider(
  deps: Deps,
  settings: ProviderSettings,
  refreshToken: string,
): Promise<TokenSet> {
  const { as, client } = parties(settings);
  try {
    const response = await oauth.refreshTokenGrantRequest(
      as,
      client,
      await clientAuth(deps, settings),
      refreshToken,
      httpOptions(deps, settings.tokenUrl),
    );
    return tokenSet(await oauth.processRefreshTokenResponse(as, client, response));
  } catch (error) {
    const answered = error instanceof oauth.ResponseBodyError && error.status < 500 ? error.error : undefined;
    const refused = answered === "invalid_grant";
    throw new ProviderStepError(
      "oauth-provider-error",
      describe(error),
      refused,
      !refused && providerDown(error),
      answered === "invalid_client" || answered === "unauthorized_client",
    );
  }
}

/**
 * The provider down rather than refusing: not reached (the connection lost, the request's own timeout) or answering
 * 5xx, 429 or `temporarily_unavailable` (RFC 6749 §4.1.2.1). A 4xx or an answer that fails its checks is a refusal.
 */
function providerDown(error: unknown): boolean {
  if (answerSaysDown(error)) return true;
  if (answerStatus(error) !== undefined) return false;
  const name = (error as Error)?.name;
  return name === "TimeoutError" || name === "AbortError" || error instanceof TypeError;
}

/**
 * RFC 7009 at the provider's revocation endpoint (`url`: not every provider has one, so the caller names it):
 * revoking the refresh token ends the grant at the provider (§2.1). False when the provider refused or was not
 * reached; the caller forgets the tokens either way.
 */
export async function revokeAtProvider(
  deps: Deps,
  settings: ProviderSettings,
  token: string,
  url: string,
): Promise<boolean> {
  const { as, client } = parties(settings);
  try {
    const response = await oauth.revocationRequest(
      { ...as, revocation_endpoint: url },
      client,
      await clientAuth(deps, settings),
      token,
      httpOptions(deps, url),
    );
    await oauth.processRevocationResponse(response);
    return true;
  } catch (error) {
    console.warn(
      JSON.stringify({
        level: "warn",
        what: "provider-revocation-failed",
        provider: settings.name,
        detail: describe(error),
      }),
    );
    return false;
  }
}

async function getJson(
  deps: Deps,
  url: string,
  accessToken: string,
  headers: Record<string, string>,
): Promise<unknown> {
  const response = await deps.outbound(url, {
    headers: { authorization: `Bearer ${accessToken}`, accept: "application/json", ...headers },
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`${new URL(url).host} answered ${response.status}`);
  return response.json();
}

/**
 * Who the user is: the provider's profile endpoint (and its email list where it keeps one apart), the token answer
 * and the ID token, through the provider's mapping. `extra` is what came with the callback (Apple's `user`).
 */
export async function fetchProfile(
  deps: Deps,
  settings: ProviderSettings,
  tokens: TokenSet,
  extra: Json = {},
): Promise<ProviderProfile> {
  const { definition } = settings;
  let userinfo: Json = extra;
  let emails: unknown;
  try {
    const headers = definition.userinfoHeaders?.(settings.clientId) ?? {};
    if (settings.userinfoUrl)
      userinfo = obj(await getJson(deps, settings.userinfoUrl, tokens.accessToken, headers));
    if (settings.userinfoUrl && definition.emailsPath) {
      const emailsUrl = new URL(definition.emailsPath, settings.userinfoUrl).toString();
      emails = await getJson(deps, emailsUrl, tokens.accessToken, headers);
    }
  } catch (error) {
    throw new ProviderStepError("oauth-profile-fetch-failed", describe(error));
  }
  const profile = definition.profile({ userinfo, token: tokens.answer, idToken: tokens.idToken, emails });
  if (!profile) throw new ProviderStepError("oauth-profile-fetch-failed", "the profile names no user id");
  return profile;
}

function describe(error: unknown): string {
  if (error instanceof oauth.ResponseBodyError) return `${error.error}: ${error.error_description ?? ""}`;
  return error instanceof Error ? error.message : String(error);
}
