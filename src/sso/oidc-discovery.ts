import type * as oauth from "oauth4webapi";
import { AppError, UnavailableError } from "../errors";
import type { Deps } from "../http/deps";
import { statusSaysDown } from "../lib/oauth-answer-status";
import {
  fetchOutbound,
  isJsonMediaType,
  OutboundFetchError,
  type OutboundLimits,
  OutboundUrlRefused,
} from "../lib/outbound-fetch";
import { checkOutboundUrl, outboundPolicy } from "../lib/outbound-url";

/**
 * An OIDC connection's IdP as its discovery document (OpenID Connect Discovery 1.0 §4) and its keys (JWKS) describe
 * it. Both are fetched on an org owner's say-so, so under the outbound-URL policy (contract auth.md §1: https, no
 * local hosts, no redirects, bounded size and time), and kept briefly in the isolate as settled plain data.
 */

const CACHE_MS = 5 * 60 * 1000;
const LIMITS: OutboundLimits = {
  timeoutMs: 5_000,
  maxBytes: 64 * 1024,
  accept: "application/json",
  mediaType: isJsonMediaType,
};

interface Cached<T> {
  value: T;
  until: number;
}
const discoveries = new Map<string, Cached<oauth.AuthorizationServer>>();
const keySets = new Map<string, Cached<{ keys: Record<string, unknown>[] }>>();

function remember<T>(cache: Map<string, Cached<T>>, key: string, value: T, now: number) {
  if (cache.size > 200) cache.clear();
  cache.set(key, { value, until: now + CACHE_MS });
}

/**
 * How a document that could not be read is answered. `down`: no answer came (unreachable, slow) or the IdP said "not
 * now" (5xx, 429: `statusSaysDown`), so the same URL may answer in a moment; otherwise it answered with something
 * that is no document (a 404, a redirect, another media type, broken JSON), which asking again meets again.
 */
export type UnreadableAnswer = (reason: string, down: boolean) => Error;

/**
 * The enterprise connections' answer to both: one 503 that says nothing of which (auth.md §1, docs/sso.md), since the
 * issuer is an org owner's URL and telling "nothing there" from "something answered" would map hosts for them.
 */
const oneUnavailable: UnreadableAnswer = (reason) => new UnavailableError(`identity provider: ${reason}`);

async function fetchJson(deps: Deps, url: string, unreadable: UnreadableAnswer): Promise<unknown> {
  // What came back, seen on the way (fetchOutbound's error tells the log only): the status, and the time running out.
  let status: number | undefined;
  let signal: AbortSignal | null | undefined;
  const watched: typeof fetch = async (input, init) => {
    signal = init?.signal;
    const response = await deps.outbound(input, init);
    status = response.status;
    return response;
  };
  try {
    const answer = await fetchOutbound(watched, url, outboundPolicy(deps.config), LIMITS);
    return JSON.parse(answer.text);
  } catch (error) {
    if (error instanceof OutboundUrlRefused) throw new AppError("invalid-request", error.message);
    // A body cut mid-way is no answer either: the same URL may give the whole document in a moment.
    const cut = error instanceof OutboundFetchError && error.cut;
    const down = status === undefined || statusSaysDown(status) || signal?.aborted === true || cut;
    throw unreadable((error as { reason?: string }).reason ?? String(error), down);
  }
}

const ENDPOINTS = ["authorization_endpoint", "token_endpoint", "jwks_uri"] as const;

/**
 * The IdP's metadata, checked: its `issuer` is exactly the configured one (§4.3), its endpoints pass the policy. A
 * document that could not be read is answered by `unreadable` (a custom provider tells down from wrong).
 */
export async function discover(
  deps: Deps,
  issuer: string,
  unreadable: UnreadableAnswer = oneUnavailable,
): Promise<oauth.AuthorizationServer> {
  const cached = discoveries.get(issuer);
  if (cached && cached.until > deps.now()) return cached.value;
  const url = `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
  const doc = (await fetchJson(deps, url, unreadable)) as Record<string, unknown> | null;
  if (!doc || typeof doc !== "object" || doc.issuer !== issuer) {
    throw new AppError(
      "sso-assertion-invalid",
      "the identity provider's discovery document names another issuer",
    );
  }
  const policy = outboundPolicy(deps.config);
  for (const name of ENDPOINTS) {
    const value = doc[name];
    if (typeof value !== "string" || !checkOutboundUrl(value, policy).ok) {
      throw new AppError(
        "sso-assertion-invalid",
        `the identity provider's ${name} is missing or not allowed`,
      );
    }
  }
  const server = doc as unknown as oauth.AuthorizationServer;
  remember(discoveries, issuer, server, deps.now());
  return server;
}

/** The IdP's public keys; `fresh` skips the cache (a key id not seen yet: the IdP rotated). */
export async function keySet(
  deps: Deps,
  jwksUri: string,
  fresh = false,
): Promise<{ keys: Record<string, unknown>[] }> {
  const cached = keySets.get(jwksUri);
  if (!fresh && cached && cached.until > deps.now()) return cached.value;
  const jwks = (await fetchJson(deps, jwksUri, oneUnavailable)) as { keys?: unknown } | null;
  if (!jwks || !Array.isArray(jwks.keys)) {
    throw new AppError("sso-assertion-invalid", "the identity provider's key set is not a JWKS");
  }
  const value = { keys: jwks.keys.filter((key) => key && typeof key === "object").slice(0, 50) };
  remember(keySets, jwksUri, value, deps.now());
  return value;
}
