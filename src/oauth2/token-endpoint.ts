import { base64url } from "jose";
import { findUserById } from "../auth/accounts";
import type { OAuth2ClientRow, UserRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { consumeCode } from "./codes";
import { OAuth2Error } from "./errors";
import { createGrant, issuesRefreshTokens, newGrantId } from "./grants";
import { param, scopeList } from "./params";
import { type GrantSummary, rotateRefreshToken } from "./refresh-tokens";
import { signIdToken, signOAuth2AccessToken } from "./tokens";

/** The token endpoint's answer (RFC 6749 §5.1, contract §3.5). */
export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token?: string;
  id_token?: string;
  scope: string;
}

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER_SHAPE = /^[A-Za-z0-9._~-]{43,128}$/;

async function s256(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64url.encode(new Uint8Array(digest));
}

async function tokensFor(
  deps: Deps,
  input: {
    client: OAuth2ClientRow;
    user: UserRow;
    grant: GrantSummary;
    scopes: string[];
    refreshToken?: string;
    nonce?: string | null;
  },
): Promise<TokenResponse> {
  const { client, user, grant, scopes, refreshToken, nonce } = input;
  const base = { config: deps.config, user, client, grantId: grant.id, scopes, now: deps.now() };
  const accessToken = await signOAuth2AccessToken(base);
  const idToken = scopes.includes("openid")
    ? await signIdToken({ ...base, accessToken, authTime: grant.authTime, nonce })
    : undefined;
  return {
    access_token: accessToken,
    token_type: "Bearer",
    expires_in: client.accessTokenLifetime,
    ...(refreshToken ? { refresh_token: refreshToken } : {}),
    ...(idToken ? { id_token: idToken } : {}),
    scope: scopes.join(" "),
  };
}

/**
 * `grant_type=authorization_code`: the code is consumed first (atomically, see `consumeCode`), then every binding is
 * checked: the client it was issued to, the exact redirect URI, the PKCE verifier (RFC 7636; a verifier without a
 * challenge is refused too, RFC 9700 §2.1.1), and that the user is still enabled. A failed check has burnt the code.
 */
async function exchangeCode(deps: Deps, client: OAuth2ClientRow, params: Map<string, string>) {
  const code = param(params, "code", 200);
  if (!code) throw new OAuth2Error("invalid_request", "code is required");
  const grantId = newGrantId();
  const row = await consumeCode(deps, code, grantId);
  const mismatch = (what: string) => new OAuth2Error("invalid_grant", what);
  if (row.clientId !== client.clientId) throw mismatch("the code was issued to another client");
  if (param(params, "redirect_uri") !== row.redirectUri) {
    throw mismatch("redirect_uri differs from the one of the authorization request");
  }
  const verifier = params.get("code_verifier");
  if (row.codeChallenge) {
    if (!verifier || !VERIFIER_SHAPE.test(verifier) || (await s256(verifier)) !== row.codeChallenge) {
      throw mismatch("code_verifier does not match the code challenge");
    }
  } else if (verifier !== undefined) {
    throw mismatch("code_verifier sent, but the authorization request had no code challenge");
  }
  const user = await findUserById(deps.db, row.userId);
  if (!user || user.disabled) throw mismatch("the user is disabled");
  const { grant, refreshToken } = await createGrant(deps, client, row.codeHash, grantId);
  return tokensFor(deps, { client, user, grant, scopes: grant.scopes, refreshToken, nonce: row.nonce });
}

/** `grant_type=refresh_token`: rotation (see `rotateRefreshToken`); `scope` may only narrow (RFC 6749 §6). */
async function refresh(deps: Deps, client: OAuth2ClientRow, params: Map<string, string>) {
  if (!issuesRefreshTokens(client)) {
    throw new OAuth2Error("unauthorized_client", "this client may not use refresh tokens");
  }
  const presented = param(params, "refresh_token", 200);
  if (!presented) throw new OAuth2Error("invalid_request", "refresh_token is required");
  const asked = params.has("scope") ? scopeList(param(params, "scope", 1000)) : undefined;
  const { grant, user, refreshToken } = await rotateRefreshToken(deps, client, presented, asked);
  return tokensFor(deps, { client, user, grant, scopes: asked ?? grant.scopes, refreshToken });
}

export async function tokenRequest(
  deps: Deps,
  client: OAuth2ClientRow,
  params: Map<string, string>,
): Promise<TokenResponse> {
  const grantType = params.get("grant_type");
  if (!grantType) throw new OAuth2Error("invalid_request", "grant_type is required");
  if (grantType !== "authorization_code" && grantType !== "refresh_token") {
    throw new OAuth2Error("unsupported_grant_type", "grant_type must be authorization_code or refresh_token");
  }
  if (!client.grantTypes.includes(grantType)) {
    throw new OAuth2Error("unauthorized_client", `this client may not use ${grantType}`);
  }
  return grantType === "authorization_code"
    ? exchangeCode(deps, client, params)
    : refresh(deps, client, params);
}
