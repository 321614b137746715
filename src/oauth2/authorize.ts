import type { OAuth2ClientRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { CODE_CHALLENGE_PATTERN } from "../lib/pkce";
import { findOAuth2Client, isRegisteredRedirect } from "./clients";
import { OAuth2Error } from "./errors";
import { ORGANIZATION_PARAM } from "./organizations";
import { type OAuth2Params, param, scopeList } from "./params";
import { newRequestId, type PendingRequest } from "./pending-requests";
import { errorResponse } from "./redirects";
import { requestedResources } from "./resources";

/** An authorization request that cannot go on: the client is sent back with this error (RFC 6749 §4.1.2.1). */
export class AuthorizeRedirect extends Error {
  constructor(readonly location: string) {
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
): Promise<{ request: PendingRequest; client: OAuth2ClientRow }> {
  const clientId = params.get("client_id");
  const client = clientId ? await findOAuth2Client(deps, clientId) : undefined;
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
      | "invalid_target",
    why: string,
  ) => new AuthorizeRedirect(errorResponse(deps.config, redirectUri, error, why, state));

  if (rawState !== undefined && state === undefined)
    throw fail("invalid_request", "state is longer than 2048 characters");
  if (params.has("request") || params.has("request_uri")) {
    throw fail("invalid_request", "request objects (request, request_uri) are not supported");
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
  let organization: string | undefined;
  try {
    scopes = scopeList(param(params, "scope", 1000));
    nonce = param(params, "nonce", 512);
    loginHint = param(params, "login_hint", 254);
    uiLocales = scopeList(param(params, "ui_locales", 200)).slice(0, 10);
    organization = param(params, ORGANIZATION_PARAM, 100);
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

  const prompt = scopeList(params.get("prompt"));
  if (prompt.some((value) => !PROMPTS.has(value))) throw fail("invalid_request", "unknown prompt value");
  if (prompt.includes("none") && prompt.length > 1) {
    throw fail("invalid_request", "prompt=none cannot be combined with other values");
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
      organization,
      createdAt: deps.now(),
    },
  };
}

/**
 * Whether a sign-in at `authTime` is recent enough for the request: `max_age` (OIDC Core §3.1.2.1) and
 * `prompt=login`, which asks for a sign-in made for this very request.
 */
export function isAuthenticationFreshEnough(request: PendingRequest, authTime: number, now: number): boolean {
  if (request.prompt.includes("login") && authTime < request.createdAt) return false;
  if (request.maxAge !== undefined && now - authTime > request.maxAge * 1000) return false;
  return true;
}
