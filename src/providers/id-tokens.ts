import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTPayload, jwtVerify } from "jose";
import { AppError, UnavailableError } from "../errors";
import type { Deps } from "../http/deps";
import { sha256Hex } from "../lib/crypto";
import type { IdTokenProvider, IdTokenSettings } from "./config";
import { type ProviderProfile, str, yes } from "./profile";

/**
 * ID tokens a native app got from Apple or Google itself (`/signin/idtoken`, `/link/idtoken`, contract §3.2): the
 * signature against the provider's JWKS, the issuer, the audience (one of `AUTH_PROVIDER_<P>_AUDIENCE`), the expiry
 * and, when the app sends one, the nonce. The JWKS is cached in KV for an hour and fetched again at once when a
 * token names a key it does not hold (the provider rotated). The cache is only a cache: a read that fails is a miss
 * (the keys come from the provider), a write that fails keeps nothing, and neither stops the sign-in. A provider that
 * cannot be reached, answers nothing in time or fails for now is 503 with Retry-After (contract §1); one that answers
 * something else than its keys is 400 `oauth-provider-error`.
 */
const JWKS_TTL_SECONDS = 3600;
const TIMEOUT_MS = 10_000;

const invalid = (why: string) => new AppError("unauthorized", "the ID token is invalid", why);

const warn = (what: string, jwksUrl: string, error: unknown) =>
  console.warn(JSON.stringify({ level: "warn", what, jwksUrl, detail: String(error) }));

async function fetchJwks(deps: Deps, settings: IdTokenSettings): Promise<JSONWebKeySet> {
  let response: Response;
  try {
    response = await deps.outbound(settings.jwksUrl, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (error) {
    throw new UnavailableError(`the provider's keys could not be fetched: ${String(error)}`);
  }
  if (response.status >= 500 || response.status === 429) {
    throw new UnavailableError(`the provider's keys could not be fetched: answered ${response.status}`);
  }
  let jwks: JSONWebKeySet;
  try {
    if (!response.ok) throw new Error(`answered ${response.status}`);
    jwks = (await response.json()) as JSONWebKeySet;
    if (!Array.isArray(jwks?.keys)) throw new Error("not a JWKS");
  } catch (error) {
    throw new AppError("oauth-provider-error", "the provider's keys could not be fetched", String(error));
  }
  try {
    await deps.env.PROVIDER_KEYS.put(settings.jwksUrl, JSON.stringify(jwks), {
      expirationTtl: JWKS_TTL_SECONDS,
    });
  } catch (error) {
    warn("provider keys not cached", settings.jwksUrl, error);
  }
  return jwks;
}

/** The cached key set; null when there is none, or when the cache cannot be read for now (then it is a miss). */
async function cachedJwks(deps: Deps, jwksUrl: string): Promise<JSONWebKeySet | null> {
  try {
    return await deps.env.PROVIDER_KEYS.get<JSONWebKeySet>(jwksUrl, "json");
  } catch (error) {
    warn("provider keys cache not read", jwksUrl, error);
    return null;
  }
}

async function verifyWith(
  jwks: JSONWebKeySet,
  token: string,
  settings: IdTokenSettings,
): Promise<JWTPayload> {
  const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), {
    issuer: settings.issuers,
    audience: settings.audiences,
    algorithms: ["RS256", "ES256"],
    requiredClaims: ["sub", "exp", "iat"],
  });
  return payload;
}

/**
 * Refetches of a key set for a key id it lacked, per isolate: at most one per `REFETCH_EVERY_MS` and JWKS URL. Between
 * them a token naming a key the set does not hold is refused without asking the provider, so made-up key ids cannot
 * turn this endpoint into a stream of requests to Apple or Google (a short negative cache). Settled numbers only.
 */
const REFETCH_EVERY_MS = 30_000;
const lastRefetch = new Map<string, number>();

function mayRefetch(deps: Deps, jwksUrl: string): boolean {
  const now = deps.now();
  if (now - (lastRefetch.get(jwksUrl) ?? Number.NEGATIVE_INFINITY) < REFETCH_EVERY_MS) return false;
  lastRefetch.set(jwksUrl, now);
  return true;
}

/** The verified claims, or 401 `unauthorized`. */
async function verifiedClaims(deps: Deps, settings: IdTokenSettings, token: string): Promise<JWTPayload> {
  const cached = await cachedJwks(deps, settings.jwksUrl);
  try {
    return await verifyWith(cached ?? (await fetchJwks(deps, settings)), token, settings);
  } catch (error) {
    if (error instanceof AppError) throw error;
    // A key the cached set does not hold: the provider may have rotated; ask once more (not too often).
    if (cached && error instanceof errors.JWKSNoMatchingKey && mayRefetch(deps, settings.jwksUrl)) {
      try {
        return await verifyWith(await fetchJwks(deps, settings), token, settings);
      } catch (retry) {
        if (retry instanceof AppError) throw retry;
        throw invalid(String(retry));
      }
    }
    throw invalid(String(error));
  }
}

/**
 * The profile an ID token vouches for. `nonce`, when given, must be the token's: as sent (Google) or as its SHA-256
 * in hex (what Apple's native flow puts in the token when the app passed the hash).
 */
export async function profileFromIdToken(
  deps: Deps,
  provider: IdTokenProvider,
  idToken: string,
  nonce?: string,
): Promise<ProviderProfile> {
  const settings = deps.config.providers.idTokens[provider];
  if (!settings) throw new AppError("disabled-endpoint", `ID tokens of ${provider} are not accepted here`);
  if (settings.nonceRequired && nonce === undefined) {
    throw new AppError("invalid-request", "nonce: required for ID tokens of this provider");
  }
  const claims = await verifiedClaims(deps, settings, idToken);
  if (nonce !== undefined && claims.nonce !== nonce && claims.nonce !== (await sha256Hex(nonce))) {
    throw invalid("nonce mismatch");
  }
  return {
    id: claims.sub!,
    email: str(claims.email),
    // Apple sends booleans as strings.
    emailVerified: yes(claims.email_verified),
    displayName: str(claims.name),
    avatarUrl: str(claims.picture),
    locale: str(claims.locale),
  };
}
