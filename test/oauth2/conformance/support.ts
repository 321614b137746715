// Shared by the conformance files (basic-op, config-op, dynamic-op): what the OpenID Foundation's suite does in every
// module, against the real HTTP surface. A relying party (`Rp`) signs a person in through the built-in page in a
// `Browser`, redeems the code, and checks what comes back the way the suite's conditions do (their names are in the
// comments, so a failing check can be looked up in the suite's source).
import {
  base64url,
  createLocalJWKSet,
  decodeProtectedHeader,
  type JSONWebKeySet,
  type JWTPayload,
  jwtVerify,
  SignJWT,
} from "jose";
import { expect, vi } from "vitest";
import type { WireClient } from "../../../src/oauth2/clients";
import { PASSWORD, signUp, type TestService } from "../../helpers";
import { Browser } from "../page-browser";
import { basic, form, ISSUER, location, postForm, REDIRECT_URI, type TokenAnswer } from "../support";

/** A client as the suite configures it: its id, how it authenticates at the token endpoint, where it listens. */
export interface Rp {
  clientId: string;
  clientSecret?: string;
  auth: "client_secret_basic" | "client_secret_post" | "none" | "private_key_jwt";
  redirectUri: string;
  /** private_key_jwt: the key its assertions are signed with, and its key id. */
  key?: { privateKey: CryptoKey; kid: string };
}

/** A client made through the admin API (test/oauth2/support.ts `newClient`) as an `Rp`. */
export const rpOf = (client: WireClient, redirectUri = REDIRECT_URI): Rp => ({
  clientId: client.clientId,
  clientSecret: client.clientSecret,
  auth: client.tokenEndpointAuthMethod as Rp["auth"],
  redirectUri,
});

/** Moves the server's clock (and the test's) on by `seconds`: what the suite's `WaitFor…` steps do in real time. */
export function later(seconds: number) {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Date.now() + seconds * 1000);
}

export async function discoveryOf(svc: TestService, issuer = ISSUER): Promise<Record<string, unknown>> {
  const response = await svc.request("GET", `${issuer}/.well-known/openid-configuration`);
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

/** The server's key set, from the `jwks_uri` discovery names (the suite's FetchServerKeys). */
export async function serverKeys(svc: TestService, issuer = ISSUER): Promise<JSONWebKeySet> {
  const response = await svc.request("GET", String((await discoveryOf(svc, issuer)).jwks_uri));
  expect(response.status).toBe(200);
  return (await response.json()) as JSONWebKeySet;
}

/** A client, the person the modules sign in as, and their browser (no cookies yet): what every flow needs. */
export interface Party {
  svc: TestService;
  rp: Rp;
  email: string;
  userId: string;
  browser: Browser;
}

export async function partyOf(svc: TestService, rp: Rp): Promise<Party> {
  const { user } = await signUp(svc);
  return { svc, rp, email: user.email, userId: user.id, browser: new Browser(svc) };
}

/** Random base64url-safe text of `length` characters (the suite's state and nonce values). */
export const random = (length = 32) =>
  Array.from({ length: Math.ceil(length / 32) }, () => crypto.randomUUID().replace(/-/g, ""))
    .join("")
    .slice(0, length);

/** CreateAuthorizationRequestSteps: response_type, client_id, scope openid, redirect_uri, a random state and nonce. */
export function requestOf(rp: Rp, extra: Record<string, string | undefined> = {}) {
  const request: Record<string, string | undefined> = {
    response_type: "code",
    client_id: rp.clientId,
    scope: "openid",
    redirect_uri: rp.redirectUri,
    state: random(),
    nonce: random(),
  };
  return { ...request, ...extra };
}

/**
 * AbstractOIDCCServerTest's flow: the authorization request in the browser, the callback checked (state, iss, code
 * entropy), the code redeemed with the client's authentication, the ID token verified (PerformStandardIdTokenChecks)
 * and userinfo called with the access token (requestProtectedResource).
 */
export async function flow(
  who: Party,
  extra: Record<string, string | undefined> = {},
  options: { method?: "GET" | "POST"; tokenExtra?: Record<string, string> } = {},
) {
  const { svc, rp } = who;
  const params = requestOf(rp, extra);
  const authorization = await authorizeInBrowser(who.browser, params, {
    email: who.email,
    method: options.method,
  });
  const code = codeOf(authorization.callback, params.state);
  const tokens = await redeem(svc, rp, code, options.tokenExtra);
  const idToken = await verifyIdToken(svc, tokens.id_token, {
    clientId: rp.clientId,
    nonce: params.nonce,
    accessToken: tokens.access_token,
  });
  const userinfo = await userinfoClaims(await userinfoRequest(svc, tokens.access_token), idToken.sub!);
  return { params, authorization, code, tokens, idToken, userinfo };
}

/** The authorization endpoint's answer to a request sent without a browser session (error modules look at it). */
export function answerTo(svc: TestService, params: Record<string, string | undefined>): Promise<Response> {
  return svc.request("GET", `/oauth2/authorize?${form(params)}`);
}

export interface Authorization {
  /** Where the browser was sent back to on the client. */
  callback: URL;
  /** What the page showed on the way: a sign-in form, a consent screen (the modules' screenshots). */
  shown: { signIn: boolean; consent: boolean };
  /** The HTML of every page shown, in order. */
  pages: string[];
}

/**
 * The person in a browser: sends it to the authorization endpoint with `params` (GET, or a form POST as
 * oidcc-ensure-post-request-succeeds does), signs in as `email` when the page asks, allows when it asks, and follows
 * redirects until the browser is sent to the client's redirect URI.
 */
export async function authorizeInBrowser(
  browser: Browser,
  params: Record<string, string | undefined>,
  options: { email: string; redirectUri?: string; method?: "GET" | "POST" },
): Promise<Authorization> {
  const target = new URL(options.redirectUri ?? params.redirect_uri ?? REDIRECT_URI);
  const shown = { signIn: false, consent: false };
  const pages: string[] = [];
  let response =
    options.method === "POST"
      ? await browser.post("/oauth2/authorize", strip(params), { origin: target.origin })
      : await browser.get(`/oauth2/authorize?${form(params)}`);
  for (let step = 0; step < 8; step++) {
    if (response.status === 302 || response.status === 303) {
      const next = location(response);
      if (next.origin === target.origin && next.pathname === target.pathname)
        return { callback: next, shown, pages };
      expect(next.toString().startsWith(ISSUER), `redirected off the server: ${next}`).toBe(true);
      response = await browser.get(next.toString());
      continue;
    }
    const page = await response.text();
    expect(response.status, page.slice(0, 300)).toBe(200);
    pages.push(page);
    const requestId = /name="request_id" value="([^"]+)"/.exec(page)?.[1];
    expect(requestId, "a page without a request").toBeTruthy();
    if (page.includes('name="password"')) {
      shown.signIn = true;
      response = await browser.post("/oauth2/interaction/sign-in", {
        request_id: requestId!,
        email: options.email,
        password: PASSWORD,
      });
    } else if (page.includes('name="decision"')) {
      shown.consent = true;
      response = await browser.post("/oauth2/interaction/consent", {
        request_id: requestId!,
        decision: "allow",
      });
    } else {
      throw new Error(`a page the person cannot get past: ${page.slice(0, 300)}`);
    }
  }
  throw new Error("the browser never came back to the client");
}

const strip = (values: Record<string, string | undefined>) =>
  Object.fromEntries(
    Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );

/**
 * A successful authorization response (RFC 6749 §4.1.2): `state` as sent (CheckStateInAuthorizationResponse), `iss`
 * the issuer (RFC 9207, ValidateIssIfPresentInAuthorizationResponse), no error, and a code of at least 128 bits whose
 * Shannon entropy is over 96 bits (EnsureMinimumAuthorizationCodeLength, …Entropy, RFC 6749 §10.10).
 */
export function codeOf(callback: URL, state: string | undefined): string {
  const params = callback.searchParams;
  expect(params.get("error"), params.get("error_description") ?? "").toBeNull();
  expect(params.get("state")).toBe(state ?? null);
  expect(params.get("iss")).toBe(ISSUER);
  const code = params.get("code") ?? "";
  expect(new TextEncoder().encode(code).length * 8).toBeGreaterThanOrEqual(128);
  expect(shannonBits(code)).toBeGreaterThan(96);
  return code;
}

function shannonBits(value: string): number {
  const counts = new Map<string, number>();
  for (const char of value) counts.set(char, (counts.get(char) ?? 0) + 1);
  let perChar = 0;
  for (const count of counts.values()) perChar -= (count / value.length) * Math.log2(count / value.length);
  return perChar * value.length;
}

/** The parameters an authorization error response may hold (CheckForUnexpectedParametersInErrorResponse…). */
const ERROR_PARAMS = new Set(["error", "error_description", "error_uri", "state", "session_state", "iss"]);

/**
 * An authorization error response (OIDC Core §3.1.2.6), as performGenericAuthorizationEndpointErrorResponseValidation
 * checks it: one of the expected codes, no code, `state` and `iss` back, nothing else, and an `error_description`
 * in the characters RFC 6749 §4.1.2.1 allows.
 */
export function expectAuthorizationError(callback: URL, errors: string[], state: string | undefined) {
  const params = callback.searchParams;
  expect(errors).toContain(params.get("error"));
  expect(params.has("code")).toBe(false);
  expect(params.get("state")).toBe(state ?? null);
  expect(params.get("iss")).toBe(ISSUER);
  expect([...params.keys()].filter((name) => !ERROR_PARAMS.has(name))).toEqual([]);
  expect(params.get("error_description") ?? "").toMatch(/^[\t\n\r\x20\x21\x23-\x5B\x5D-\x7E]*$/);
}

/** A token request with the client's own authentication (AddBasicAuthClientSecretToRequest, …FormBased…, a JWT). */
export async function tokenRequest(
  svc: TestService,
  rp: Rp,
  values: Record<string, string | undefined>,
  assertionAudience = `${ISSUER}/oauth2/token`,
): Promise<Response> {
  switch (rp.auth) {
    case "client_secret_basic":
      return postForm(
        svc,
        "/oauth2/token",
        values,
        basic({ clientId: rp.clientId } as WireClient, rp.clientSecret),
      );
    case "client_secret_post":
      return postForm(svc, "/oauth2/token", {
        ...values,
        client_id: rp.clientId,
        client_secret: rp.clientSecret,
      });
    case "none":
      return postForm(svc, "/oauth2/token", { ...values, client_id: rp.clientId });
    case "private_key_jwt":
      return postForm(svc, "/oauth2/token", {
        ...values,
        client_id: rp.clientId,
        client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        client_assertion: await clientAssertion(rp, assertionAudience),
      });
  }
}

/** RFC 7523 §3 / OIDC Core §9: iss = sub = the client, a fresh jti, a short life. */
export function clientAssertion(rp: Rp, audience: string): Promise<string> {
  if (!rp.key) throw new Error("private_key_jwt needs the client's key");
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ jti: crypto.randomUUID() })
    .setProtectedHeader({ alg: "RS256", kid: rp.key.kid })
    .setIssuer(rp.clientId)
    .setSubject(rp.clientId)
    .setAudience(audience)
    .setIssuedAt(now)
    .setExpirationTime(now + 60)
    .sign(rp.key.privateKey);
}

/**
 * The token endpoint's answer to a good request (CheckTokenEndpointHttpStatus200, …ReturnedJsonContentType,
 * …CacheHeaders, CheckTokenTypeIsBearer, ValidateExpiresIn, EnsureRefreshTokenContainsAllowedCharactersOnly).
 */
export async function tokensFrom(response: Response): Promise<TokenAnswer> {
  const body = await response.text();
  expect(response.status, body).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  expect(response.headers.get("cache-control")).toContain("no-store");
  const tokens = JSON.parse(body) as TokenAnswer;
  expect(tokens.token_type).toMatch(/^bearer$/i);
  expect(Number.isInteger(tokens.expires_in) && tokens.expires_in > 0).toBe(true);
  expect(tokens.access_token).toMatch(/^[\x20-\x7E]+$/);
  if (tokens.refresh_token !== undefined) expect(tokens.refresh_token).toMatch(/^[\x20-\x7E]+$/);
  return tokens;
}

/** Redeems a code (CreateTokenEndpointRequestForAuthorizationCodeGrant) and checks the answer. */
export async function redeem(svc: TestService, rp: Rp, code: string, extra: Record<string, string> = {}) {
  const values = { grant_type: "authorization_code", code, redirect_uri: rp.redirectUri, ...extra };
  return tokensFrom(await tokenRequest(svc, rp, values));
}

export type IdTokenClaims = JWTPayload & Record<string, unknown>;

/** Claims of OIDC Core §5.1 and their JSON types, as ValidateIdTokenStandardClaims and its userinfo twin check them. */
const STANDARD_CLAIM_TYPES: Record<string, "string" | "boolean" | "number" | "object"> = {
  name: "string",
  given_name: "string",
  family_name: "string",
  preferred_username: "string",
  picture: "string",
  locale: "string",
  email: "string",
  email_verified: "boolean",
  phone_number: "string",
  phone_number_verified: "boolean",
  address: "object",
  updated_at: "number",
};

export function expectStandardClaimTypes(claims: Record<string, unknown>) {
  for (const [name, type] of Object.entries(STANDARD_CLAIM_TYPES)) {
    if (name in claims) expect(typeof claims[name], name).toBe(type);
  }
}

/**
 * An ID token as PerformStandardIdTokenChecks verifies it (OIDC Core §3.1.3.7): RS256 with a `kid` of the server's
 * key set (EnsureIdTokenContainsKid, CheckIdTokenSignatureAlgorithm, ValidateIdTokenSignature), `iss` the issuer,
 * `aud` the client, `exp` ahead but not absurdly, `iat` not in the future, `auth_time` within the last year, `nonce`
 * exactly the one sent (or none when none was sent), `sub` present, a non-empty `acr`, standard claims well typed,
 * and `at_hash` right for the access token (ValidateAtHash, §3.3.2.11).
 */
export async function verifyIdToken(
  svc: TestService,
  idToken: string | undefined,
  expected: { clientId: string; nonce?: string; accessToken?: string },
): Promise<IdTokenClaims> {
  expect(idToken, "an ID token").toBeTruthy();
  const header = decodeProtectedHeader(idToken!);
  expect(header.alg).toBe("RS256");
  const keys = await serverKeys(svc);
  expect(keys.keys.map((key) => key.kid)).toContain(header.kid);
  const { payload } = await jwtVerify(idToken!, createLocalJWKSet(keys), {
    issuer: ISSUER,
    audience: expected.clientId,
    algorithms: ["RS256"],
  });
  const claims = payload as IdTokenClaims;
  const now = Date.now() / 1000;
  expect(typeof claims.sub === "string" && claims.sub.length > 0).toBe(true);
  expect(claims.exp!).toBeGreaterThan(now);
  expect(claims.exp!).toBeLessThan(now + 50 * 365 * 86400);
  expect(claims.iat!).toBeLessThanOrEqual(Math.ceil(now));
  if (claims.auth_time !== undefined) {
    expect(claims.auth_time as number).toBeLessThanOrEqual(Math.ceil(now));
    expect(claims.auth_time as number).toBeGreaterThan(now - 365 * 86400);
  }
  expect(claims.nonce).toBe(expected.nonce);
  if (claims.acr !== undefined) expect(claims.acr).not.toBe("");
  expectStandardClaimTypes(claims);
  if (expected.accessToken !== undefined) {
    const digest = new Uint8Array(
      await crypto.subtle.digest("SHA-256", new TextEncoder().encode(expected.accessToken)),
    );
    expect(claims.at_hash).toBe(base64url.encode(digest.slice(0, 16)));
  }
  return claims;
}

/**
 * oidcc-refresh-token's steps for one client (RefreshTokenRequestSteps): a grant with offline_access and
 * prompt=consent, a refresh a second later with the same scope (200, Bearer, no-store, a new access token), its ID
 * token with the first one's iss, sub, aud and auth_time and a new iat (OIDC Core §12.2, CompareIdTokenClaims), and
 * userinfo with the new access token. Returns the refresh token the client now holds.
 */
export async function refreshAndCompare(who: Party): Promise<string> {
  const first = await flow(who, { scope: "openid offline_access", prompt: "consent" });
  expect(first.tokens.refresh_token).toBeTruthy();
  later(1);
  const refresh = {
    grant_type: "refresh_token",
    refresh_token: first.tokens.refresh_token,
    scope: "openid offline_access",
  };
  const refreshed = await tokensFrom(await tokenRequest(who.svc, who.rp, refresh));
  expect(refreshed.access_token).not.toBe(first.tokens.access_token);
  const idToken = await verifyIdToken(who.svc, refreshed.id_token, {
    clientId: who.rp.clientId,
    accessToken: refreshed.access_token,
  });
  for (const claim of ["iss", "sub", "aud", "auth_time"])
    expect(idToken[claim], claim).toEqual(first.idToken[claim]);
  expect(idToken.iat).not.toBe(first.idToken.iat);
  await userinfoClaims(await userinfoRequest(who.svc, refreshed.access_token), idToken.sub!);
  return refreshed.refresh_token ?? first.tokens.refresh_token!;
}

/** The three ways a client may send its access token to userinfo (OIDC Core §5.3.1, RFC 6750 §2.1 and §2.2). */
export function userinfoRequest(
  svc: TestService,
  accessToken: string,
  how: "get" | "post-header" | "post-body" = "get",
): Promise<Response> {
  if (how === "get") return svc.request("GET", "/oauth2/userinfo", { token: accessToken });
  if (how === "post-header") return svc.request("POST", "/oauth2/userinfo", { token: accessToken });
  return postForm(svc, "/oauth2/userinfo", { access_token: accessToken });
}

/**
 * A userinfo answer as AbstractOIDCCUserInfoTest validates it: 200, JSON (EnsureContentTypeJson), a `sub` equal to
 * the ID token's (VerifyUserInfoAndIdTokenInTokenEndpointSameSub, OIDC Core §5.3.2), standard claims well typed.
 */
export async function userinfoClaims(response: Response, sub: string): Promise<Record<string, unknown>> {
  const body = await response.text();
  expect(response.status, body).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const claims = JSON.parse(body) as Record<string, unknown>;
  expect(claims.sub).toBe(sub);
  expectStandardClaimTypes(claims);
  return claims;
}
