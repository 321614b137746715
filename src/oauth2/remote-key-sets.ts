import type { JSONWebKeySet } from "jose";
import type { Deps } from "../http/deps";
import {
  fetchOutbound,
  isJsonMediaType,
  OutboundFetchError,
  type OutboundLimits,
  OutboundUrlRefused,
} from "../lib/outbound-fetch";
import { outboundPolicy } from "../lib/outbound-url";
import { publicJwksSchema } from "./clients/client-schema";

/**
 * Key sets this server fetches to check a signature someone else made: a `private_key_jwt` client's `jwks_uri`
 * (clients/client-keys.ts) and a trusted assertion issuer's `jwksUri` (assertion-issuers.ts). Fetched under the
 * outbound-URL policy (src/lib/outbound-url.ts, checked again at every fetch: never this service's own hosts, so a
 * file it stores cannot pose as a key set), five seconds, 64 KiB, JSON, no redirects; a set must hold 1 to 10 keys,
 * each public (a published private key is a leaked one). A set is kept five minutes per isolate (settled plain data
 * only, DESIGN "Workers"); a key id it lacks makes one fresh fetch, at most every 30 seconds per URI, so made-up key
 * ids cannot turn the token endpoint into a stream of requests to someone's host.
 */
const CACHE_MS = 5 * 60_000;
const REFETCH_EVERY_MS = 30_000;
const LIMITS: OutboundLimits = {
  timeoutMs: 5_000,
  maxBytes: 64 * 1024,
  accept: "application/jwk-set+json, application/json",
  mediaType: (type) => isJsonMediaType(type) || type === "application/jwk-set+json",
};

const fetched = new Map<string, { keys: JSONWebKeySet; at: number }>();

/**
 * A fetch that failed, whatever the cause: callers answer every one the same way (a caller who could tell a refused
 * URL from a timeout or a 404 could map which hosts answer from here, contract §1); `reason` is for the log.
 */
export class KeySetUnfetchable extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "KeySetUnfetchable";
  }
}

async function fetchKeySet(deps: Deps, uri: string): Promise<JSONWebKeySet> {
  let text: string;
  try {
    const answer = await fetchOutbound(deps.outbound, uri, outboundPolicy(deps.config), LIMITS);
    if (answer.status !== 200) throw new KeySetUnfetchable(`answered ${answer.status}`);
    text = answer.text;
  } catch (error) {
    if (error instanceof OutboundFetchError || error instanceof OutboundUrlRefused) {
      throw new KeySetUnfetchable(error.reason);
    }
    throw error;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new KeySetUnfetchable("the body is not JSON");
  }
  const parsed = publicJwksSchema.safeParse(body);
  if (!parsed.success) throw new KeySetUnfetchable("not a JWK set of 1 to 10 public keys");
  const keys = parsed.data as unknown as JSONWebKeySet;
  if (fetched.size > 500) fetched.clear();
  fetched.set(uri, { keys, at: deps.now() });
  return keys;
}

const lastRefetch = new Map<string, number>();

/**
 * The key set at `uri`, as cached while fresh, else fetched (`fetchedNow`: a set fetched by this very call is not
 * worth fetching again for a key id it lacks). Throws `KeySetUnfetchable` when a fetch fails.
 */
export async function remoteKeySet(
  deps: Deps,
  uri: string,
): Promise<{ keys: JSONWebKeySet; fetchedNow: boolean }> {
  const cached = fetched.get(uri);
  if (cached && deps.now() - cached.at < CACHE_MS) return { keys: cached.keys, fetchedNow: false };
  return { keys: await fetchKeySet(deps, uri), fetchedNow: true };
}

/**
 * The set at `uri` fetched anew, for a signature naming a key id the cached set lacks (its owner may have rotated);
 * undefined when this URI was fetched anew less than 30 seconds ago: until then an unknown key stays unknown.
 */
export async function refetchedKeySet(deps: Deps, uri: string): Promise<JSONWebKeySet | undefined> {
  const now = deps.now();
  if (now - (lastRefetch.get(uri) ?? Number.NEGATIVE_INFINITY) < REFETCH_EVERY_MS) return undefined;
  if (lastRefetch.size > 500) lastRefetch.clear();
  lastRefetch.set(uri, now);
  return fetchKeySet(deps, uri);
}
