import type { JSONWebKeySet } from "jose";
import type { OAuth2ClientRow } from "../../db/schema";
import type { Deps } from "../../http/deps";
import {
  fetchOutbound,
  isJsonMediaType,
  OutboundFetchError,
  type OutboundLimits,
  OutboundUrlRefused,
} from "../../lib/outbound-fetch";
import { outboundPolicy } from "../../lib/outbound-url";
import { OAuth2Error } from "../errors";
import { publicJwksSchema } from "./client-schema";

/**
 * The public keys of a `private_key_jwt` client (RFC 7591 `jwks` / `jwks_uri`): registered inline, or fetched from
 * its `jwks_uri` under the outbound-URL policy (src/lib/outbound-url.ts, checked again at every fetch: never this
 * service's own hosts, so a file it stores cannot pose as a client's key set), five seconds, 64 KiB, JSON, no
 * redirects. A fetched set is kept five minutes per isolate (settled plain data only, DESIGN "Workers"); a key id it
 * lacks makes one refetch (the client rotated its keys), at most every 30 seconds per URI, so made-up key ids cannot
 * turn the token endpoint into a stream of requests to the client's host.
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
const lastRefetch = new Map<string, number>();

/**
 * One answer to every fetch that went wrong, whatever the cause: a caller who could tell a refused URL from a timeout
 * or a 404 could map which hosts answer from here (contract §1). The log has the reason.
 */
const unfetchable = (uri: string, reason: string) =>
  new OAuth2Error(
    "invalid_client",
    "the client's keys could not be fetched from its jwks_uri",
    undefined,
    `client jwks_uri ${uri.slice(0, 300)}: ${reason}`,
  );

async function fetchKeySet(deps: Deps, uri: string): Promise<JSONWebKeySet> {
  let text: string;
  try {
    const answer = await fetchOutbound(deps.outbound, uri, outboundPolicy(deps.config), LIMITS);
    if (answer.status !== 200) throw new OutboundFetchError(`answered ${answer.status}`);
    text = answer.text;
  } catch (error) {
    if (error instanceof OutboundFetchError || error instanceof OutboundUrlRefused) {
      throw unfetchable(uri, error.reason);
    }
    throw error;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw unfetchable(uri, "the body is not JSON");
  }
  // The same rule as a registered `jwks`: a few keys, each public (a published private key is a leaked one).
  const parsed = publicJwksSchema.safeParse(body);
  if (!parsed.success) throw unfetchable(uri, "not a JWK set of 1 to 10 public keys");
  const keys = parsed.data as unknown as JSONWebKeySet;
  if (fetched.size > 500) fetched.clear();
  fetched.set(uri, { keys, at: deps.now() });
  return keys;
}

/**
 * The client's keys: its registered `jwks`, else its `jwks_uri`'s set as cached, fetched when there is none yet
 * (`fetchedNow`: a set just fetched is not fetched again for a key id it lacks).
 */
export async function clientKeySet(
  deps: Deps,
  client: OAuth2ClientRow,
): Promise<{ keys: JSONWebKeySet; fetchedNow: boolean }> {
  if (client.jwks) return { keys: client.jwks as unknown as JSONWebKeySet, fetchedNow: false };
  const uri = client.jwksUri;
  if (!uri) throw new OAuth2Error("invalid_client", "the client has no registered keys (jwks or jwks_uri)");
  const cached = fetched.get(uri);
  if (cached && deps.now() - cached.at < CACHE_MS) return { keys: cached.keys, fetchedNow: false };
  return { keys: await fetchKeySet(deps, uri), fetchedNow: true };
}

/**
 * The client's `jwks_uri` set fetched anew, for an assertion whose key the cached set lacks; undefined when there is
 * nothing to refetch (inline keys) or a refetch of this URI happened less than 30 seconds ago.
 */
export async function refetchedClientKeySet(
  deps: Deps,
  client: OAuth2ClientRow,
): Promise<JSONWebKeySet | undefined> {
  const uri = client.jwksUri;
  if (client.jwks || !uri) return undefined;
  const now = deps.now();
  if (now - (lastRefetch.get(uri) ?? Number.NEGATIVE_INFINITY) < REFETCH_EVERY_MS) return undefined;
  if (lastRefetch.size > 500) lastRefetch.clear();
  lastRefetch.set(uri, now);
  return fetchKeySet(deps, uri);
}
