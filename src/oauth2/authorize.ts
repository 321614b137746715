import { knownAcrValues } from "../browser/acr";
import type { OAuth2ClientRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { CODE_CHALLENGE_PATTERN } from "../lib/pkce";
import { type AuthorizationDetail, requestedAuthorizationDetails } from "./authorization-details";
import { findOAuth2Client, isRegisteredRedirect } from "./clients";
import { OAuth2Error, type OAuth2ErrorCode } from "./errors";
import { verifyIdTokenHint } from "./id-token-hint";
import { ORGANIZATION_PARAM } from "./organizations";
import { type OAuth2Params, param, scopeList } from "./params";
import { newRequestId, type PendingRequest } from "./pending-requests";
import { errorResponse } from "./redirects";
import { requestedResources } from "./resources";

/**
 * An authorization request that cannot go on: the client is sent back with this error (RFC 6749 §4.1.2.1). The
 * pushed authorization request endpoint answers the same error as JSON instead (RFC 9126 §2.3).
 */
export class AuthorizeRedirect extends Error {
  constructor(
    readonly location: string,
    readonly error: OAuth2ErrorCode = "invalid_request",
    readonly description = "",
  ) {
    super("authorization error redirect");
  }
}

const PROMPTS = new Set(["none", "login", "consent", "select_account"]);

/**
 * Checks an authorization request (contract §3.5) and returns it as a pending request. The client and its redirect
 * URI are settled first, and a failure there is a JSON error, never a redirect: sending the browser to a URI the
 * client did not register is the open redirector of RFC 9700 §4.11. Every later failure goes back to the client.
 */
export async function parseAuthorizationRequest(
  deps: Deps,
  params: OAuth2Params,
  /**
   * `pushedBy`: the request came through PAR (RFC 9126), pushed by this authenticated client, which it names; a
   * client or deployment that requires PAR accepts only such requests (par.ts).
   */
  options: { pushedBy?: OAuth2ClientRow } = {},
): Promise<{ request: PendingRequest; client: OAuth2ClientRow }> {
  const clientId = params.get("client_id");
  const { pushedBy } = options;
  if (pushedBy && clientId !== pushedBy.clientId) {
    throw new OAuth2Error("invalid_request", "client_id differs from the client that pushed the request");
  }
  const client = pushedBy ?? (clientId ? await findOAuth2Client(deps, clientId) : undefined);
  if (!client) throw new OAuth2Error("invalid_client", "unknown client_id");
  const redirectUri = params.get("redirect_uri");
  if (!redirectUri || !isRegisteredRedirect(client, redirectUri)) {
    throw new OAuth2Error(
      "invalid_request",
      "redirect_uri is not one of the client's registered redirect URIs",
    );
  }
  // `state` comes back unchanged; a value too long to echo is dropped rather than cut.
  const rawState = params.get("state");
  const state = rawState !== undefined && rawState.length <= 2048 ? rawState : undefined;
  const fail = (
    error:
      | "invalid_request"
      | "invalid_scope"
      | "unsupported_response_type"
      | "unauthorized_client"
      | "invalid_target"
      | "request_not_supported"
      | "request_uri_not_supported"
      | "invalid_authorization_details",
    why: string,
  ) => new AuthorizeRedirect(errorResponse(deps.config, redirectUri, error, why, state), error, why);

  if (rawState !== undefined && state === undefined)
    throw fail("invalid_request", "state is longer than 2048 characters");
  // RFC 9126 §5: a client (or a deployment) that requires PAR takes no request straight from the browser.
  if (!pushedBy && (deps.config.oauth2.requirePar || client.requirePushedAuthorizationRequests)) {
    throw fail(
      "invalid_request",
      "this client must push its authorization requests first (pushed_authorization_request_endpoint, RFC 9126)",
    );
  }
  // OIDC Core §3.1.2.6: request objects are not supported, by value or by reference. A PAR `request_uri` was taken
  // before this (par.ts); any other is never fetched, and one inside a pushed request is refused there.
  if (params.has("request")) throw fail("request_not_supported", "request objects are not supported");
  if (params.has("request_uri")) {
    throw fail(
      "request_uri_not_supported",
      "request objects by reference are not supported; request_uri only names a request pushed to this server",
    );
  }
  const responseType = params.get("response_type");
  if (responseType !== "code") throw fail("unsupported_response_type", "response_type must be code");
  const responseMode = params.get("response_mode");
  if (responseMode !== undefined && responseMode !== "query")
    throw fail("invalid_request", "response_mode must be query");
  if (!client.grantTypes.includes("authorization_code")) {
    throw fail("unauthorized_client", "this client may not use the authorization code grant");
  }

  let scopes: string[];
  let nonce: string | undefined;
  let loginHint: string | undefined;
  let uiLocales: string[];
  let acrValues: string[];
  let organization: string | undefined;
  let hintText: string | undefined;
  // Every bounded read after the redirect URI is settled sits in here: an over-long value goes back to the client as
  // `invalid_request` (RFC 6749 §4.1.2.1), never as a JSON 400 that leaves the browser stranded on this server.
  try {
    scopes = scopeList(param(params, "scope", 1000));
    nonce = param(params, "nonce", 512);
    loginHint = param(params, "login_hint", 254);
    uiLocales = scopeList(param(params, "ui_locales", 200)).slice(0, 10);
    organization = param(params, ORGANIZATION_PARAM, 100);
    // OIDC Core §3.1.2.1: in order of preference, unknown values ignored; the session must reach one
    // (browser/step-up.ts).
    acrValues = knownAcrValues(scopeList(param(params, "acr_values", 1000)));
    hintText = param(params, "id_token_hint", 8192);
  } catch (error) {
    throw fail("invalid_request", error instanceof Error ? error.message : "invalid parameter");
  }
  let resources: string[];
  try {
    resources = requestedResources(deps.config, client, params.resources);
  } catch (error) {
    throw fail("invalid_target", error instanceof Error ? error.message : "invalid resource");
  }
  const outside = scopes.filter((scope) => !client.scopes.includes(scope));
  if (outside.length > 0)
    throw fail("invalid_scope", `scope not allowed for this client: ${outside.join(" ")}`);
  // RFC 9396 §5: of a type the client may use, each matching its type's schema; else the client hears why.
  let authorizationDetails: AuthorizationDetail[] | undefined;
  try {
    authorizationDetails = requestedAuthorizationDetails(client, params.get("authorization_details"));
  } catch (error) {
    if (error instanceof OAuth2Error) throw fail("invalid_authorization_details", error.description);
    throw error;
  }

  const challenge = params.get("code_challenge");
  const method = params.get("code_challenge_method");
  if (challenge === undefined) {
    if (method !== undefined) throw fail("invalid_request", "code_challenge_method without code_challenge");
    if (client.tokenEndpointAuthMethod === "none") {
      throw fail("invalid_request", "a public client must use PKCE (code_challenge with S256)");
    }
  } else {
    // RFC 7636 §4.3: no method means `plain`, which is refused like an explicit one (RFC 9700 §2.1.1).
    if (method !== "S256") throw fail("invalid_request", "code_challenge_method must be S256");
    if (!CODE_CHALLENGE_PATTERN.test(challenge)) throw fail("invalid_request", "code_challenge is malformed");
  }

  // RFC 9449 §10: the client binds the code to its DPoP key; the code exchange then needs a proof by that key.
  const dpopJkt = params.get("dpop_jkt");
  if (dpopJkt !== undefined && !/^[A-Za-z0-9_-]{43}$/.test(dpopJkt)) {
    throw fail("invalid_request", "dpop_jkt must be a JWK SHA-256 thumbprint (43 base64url characters)");
  }

  const prompt = scopeList(params.get("prompt"));
  if (prompt.some((value) => !PROMPTS.has(value))) throw fail("invalid_request", "unknown prompt value");
  if (prompt.includes("none") && prompt.length > 1) {
    throw fail("invalid_request", "prompt=none cannot be combined with other values");
  }
  // OIDC Core §3.1.2.1: the user the client believes is signed in. Only an ID token this server issued to this client
  // (expired ones too) is a hint; anything else is refused rather than ignored, so the client learns of its mistake.
  const hint = hintText === undefined ? undefined : await verifyIdTokenHint(deps.config, hintText);
  if (hint === null || (hint && hint.clientId !== client.clientId)) {
    throw fail("invalid_request", "id_token_hint is not an ID token this server issued to this client");
  }

  const maxAgeText = params.get("max_age");
  const maxAge = maxAgeText === undefined ? undefined : Number(maxAgeText);
  if (maxAge !== undefined && !(/^\d{1,9}$/.test(maxAgeText ?? "") && Number.isSafeInteger(maxAge))) {
    throw fail("invalid_request", "max_age must be a non-negative integer");
  }

  return {
    client,
    request: {
      id: newRequestId(),
      clientId: client.clientId,
      redirectUri,
      scopes,
      resources,
      state,
      nonce,
      codeChallenge: challenge,
      prompt,
      maxAge,
      loginHint,
      uiLocales,
      ...(acrValues.length ? { acrValues } : {}),
      organization,
      ...(dpopJkt ? { dpopJkt } : {}),
      ...(hint ? { hintedUserId: hint.sub } : {}),
      ...(authorizationDetails ? { authorizationDetails } : {}),
      createdAt: deps.now(),
    },
  };
}
