import { and, eq, gt } from "drizzle-orm";
import * as oauth from "oauth4webapi";
import { providerRequests } from "../db/schema";
import type { Deps } from "../http/deps";
import { decrypt, encrypt, sha256Hex } from "../lib/crypto";
import {
  authorizationUrl,
  exchangeCode,
  fetchProfile,
  ProviderStepError,
  refreshAtProvider,
  revokeAtProvider,
  type TokenSet,
} from "./client";
import type { ProviderSettings } from "./config";
import { enabledProvider } from "./custom-endpoints";
import { REQUEST_LIFETIME_MS, takeRequest } from "./flow";
import type { ProviderProfile } from "./profile";

/**
 * A connection to a provider account for a user who is already signed in (the token vault, operators.md §3): the
 * same request rows, PKCE, nonce, browser binding, code exchange and profile as a sign-in (flow.ts, client.ts), but
 * the callback neither signs anyone in nor links an identity (a connected account is no way to sign in): it hands the
 * provider's tokens to the caller, which keeps them. Its requests carry `purpose: "connection"` in their options;
 * the sign-in callback refuses them and this one refuses the sign-in's.
 *
 * It starts from an API call (`POST …/user/connections/{p}`, a Bearer token), which cannot give the browser its
 * binding cookie; so the request is stored unbound, and the browser claims it at a start URL of the service
 * (`claimConnection`): that URL binds the browser, once, and only then sends it to the provider.
 */

const CONNECTION = "connection";
/** `browser_hash` of a request no browser claimed yet: never a SHA-256 hex, so the callback cannot match it. */
const UNCLAIMED = "unclaimed";

export interface ConnectionRequest {
  userId: string;
  /** Scopes asked besides the provider's configured ones. */
  scopes: string[];
  /** Parameters of the authorization URL for offline access (Google's `access_type=offline`). */
  params: Record<string, string>;
  /** Where the browser lands afterwards (checked by the caller). */
  returnTo: string;
  /** The caller's own facts, handed back at the callback (the clients the user lets use the connection). */
  context: Record<string, unknown>;
}

const enabled = (deps: Deps, provider: string): Promise<ProviderSettings | undefined> =>
  enabledProvider(deps, provider);

/** Stores the request; its state (256 random bits) is what the start URL carries, and only its hash is kept. */
export async function openConnection(deps: Deps, provider: string, request: ConnectionRequest) {
  const settings = await enabled(deps, provider);
  if (!settings) return null;
  const state = oauth.generateRandomState();
  const codeVerifier = settings.definition.pkce ? oauth.generateRandomCodeVerifier() : undefined;
  await deps.db.insert(providerRequests).values({
    stateHash: await sha256Hex(state),
    provider: settings.name,
    codeVerifierSealed: codeVerifier ? await encrypt(deps.config.secrets.encryptionKey, codeVerifier) : null,
    nonce: settings.oidc ? oauth.generateRandomNonce() : null,
    redirectTo: request.returnTo,
    options: {
      purpose: CONNECTION,
      scopes: request.scopes,
      params: request.params,
      context: request.context,
    },
    connectUserId: request.userId,
    browserHash: UNCLAIMED,
    expiresAt: deps.now() + REQUEST_LIFETIME_MS,
  });
  return state;
}

/**
 * The start URL opened in a browser: the request is bound to it by one conditional UPDATE (a second browser opening
 * the same URL finds it claimed), and the browser goes to the provider's consent (asked first: ask-first.ts), for the
 * user it names. Null: no such request (any more).
 */
export async function claimConnection(
  deps: Deps,
  provider: string,
  state: string,
  browserHash: string,
  redirectUri: string,
): Promise<{ url: string; userId: string; returnTo: string } | null> {
  const settings = await enabled(deps, provider);
  if (!settings || state.length > 200) return null;
  // The start URL's state is its maker's (the account's app holds it): the provider gets a fresh one, which only this
  // browser's sealed question carries (ask-first.ts). With the old one, whoever made the start URL could open it in a
  // victim's browser (which claims it) and send that browser to a provider URL built by hand, past the question.
  const fresh = oauth.generateRandomState();
  const row = await deps.db
    .update(providerRequests)
    .set({ browserHash, stateHash: await sha256Hex(fresh) })
    .where(
      and(
        eq(providerRequests.stateHash, await sha256Hex(state)),
        eq(providerRequests.provider, provider),
        eq(providerRequests.browserHash, UNCLAIMED),
        gt(providerRequests.expiresAt, deps.now()),
      ),
    )
    .returning()
    .get();
  if (!row || row.options.purpose !== CONNECTION) return null;
  const scopes = [...new Set([...settings.scopes, ...(row.options.scopes as string[])])];
  const verifier = row.codeVerifierSealed
    ? await decrypt(deps.config.secrets.encryptionKey, row.codeVerifierSealed)
    : undefined;
  const url = authorizationUrl(settings, {
    redirectUri,
    state: fresh,
    codeChallenge: verifier ? await oauth.calculatePKCECodeChallenge(verifier) : undefined,
    nonce: row.nonce ?? undefined,
    extra: {
      ...(row.options.params as Record<string, string>),
      scope: scopes.join(settings.definition.scopeSeparator ?? " "),
    },
  });
  return { url, userId: row.connectUserId!, returnTo: row.redirectTo };
}

export type ConnectionOutcome =
  | {
      ok: true;
      userId: string;
      returnTo: string;
      context: Record<string, unknown>;
      tokens: TokenSet;
      profile: ProviderProfile;
      asked: string[];
    }
  | { ok: false; returnTo: string | null; code: string; detail: string };

/**
 * The provider's callback: the request taken once, by the browser that claimed it; the code exchanged and the
 * profile read as for a sign-in. A failure says where the browser goes back to (null: the request was not found).
 */
export async function finishConnection(
  deps: Deps,
  provider: string,
  params: Record<string, string>,
  browserHash: string | null,
  redirectUri: string,
): Promise<ConnectionOutcome> {
  const request = await takeRequest(deps, provider, params.state, browserHash);
  const settings = await enabled(deps, provider);
  if (!request || request.options.purpose !== CONNECTION || !request.connectUserId || !settings) {
    return {
      ok: false,
      returnTo: null,
      code: "invalid-state",
      detail: "no pending connection for this browser",
    };
  }
  const fail = (code: string, detail: string): ConnectionOutcome => ({
    ok: false,
    returnTo: request.redirectTo,
    code,
    detail,
  });
  try {
    if (params.error || !params.code) {
      return fail(
        "oauth-provider-error",
        (params.error_description ?? params.error ?? "no code").slice(0, 200),
      );
    }
    const tokens = await exchangeCode(deps, settings, {
      code: params.code,
      redirectUri,
      codeVerifier: request.codeVerifierSealed
        ? await decrypt(deps.config.secrets.encryptionKey, request.codeVerifierSealed)
        : undefined,
      nonce: request.nonce ?? undefined,
    });
    const profile = await fetchProfile(deps, settings, tokens);
    return {
      ok: true,
      userId: request.connectUserId,
      returnTo: request.redirectTo,
      context: request.options.context as Record<string, unknown>,
      tokens,
      profile,
      asked: [...new Set([...settings.scopes, ...(request.options.scopes as string[])])],
    };
  } catch (error) {
    if (error instanceof ProviderStepError) {
      console.warn(JSON.stringify({ level: "warn", what: error.code, provider, detail: error.detail }));
      return fail(error.code, error.detail.slice(0, 200));
    }
    throw error;
  }
}

/** The provider's refresh grant for a kept refresh token (`ProviderStepError` when it fails; `unreachable` then). */
export async function refreshConnection(
  deps: Deps,
  provider: string,
  refreshToken: string,
): Promise<TokenSet> {
  const settings = await enabled(deps, provider);
  if (!settings)
    throw new ProviderStepError("oauth-provider-error", `the provider ${provider} is not enabled`);
  return refreshAtProvider(deps, settings, refreshToken);
}

/** RFC 7009 at the provider's revocation endpoint; false when it refused or could not be reached. */
export async function revokeConnection(
  deps: Deps,
  provider: string,
  token: string,
  url: string,
): Promise<boolean> {
  const settings = await enabled(deps, provider);
  if (!settings) return false;
  return revokeAtProvider(deps, settings, token, url);
}
