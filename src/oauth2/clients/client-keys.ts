import type { JSONWebKeySet } from "jose";
import type { OAuth2ClientRow } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { OAuth2Error } from "../errors";
import { KeySetUnfetchable, refetchedKeySet, remoteKeySet } from "../remote-key-sets";

/**
 * The public keys of a `private_key_jwt` client (RFC 7591 `jwks` / `jwks_uri`): registered inline, or fetched from
 * its `jwks_uri` (remote-key-sets.ts: the outbound-URL policy, a short cache, a refetch for an unknown key id at
 * most every 30 seconds). Every failed fetch is the same `invalid_client`; the log has the reason.
 */
async function fetchedKeys<T>(uri: string, fetch: () => Promise<T>): Promise<T> {
  try {
    return await fetch();
  } catch (error) {
    if (!(error instanceof KeySetUnfetchable)) throw error;
    throw new OAuth2Error(
      "invalid_client",
      "the client's keys could not be fetched from its jwks_uri",
      undefined,
      `client jwks_uri ${uri.slice(0, 300)}: ${error.reason}`,
    );
  }
}

/**
 * The client's keys: its registered `jwks`, else its `jwks_uri`'s set (`fetchedNow`: fetched by this call, so not
 * worth fetching again for a key id it lacks).
 */
export async function clientKeySet(
  deps: Deps,
  client: OAuth2ClientRow,
): Promise<{ keys: JSONWebKeySet; fetchedNow: boolean }> {
  if (client.jwks) return { keys: client.jwks as unknown as JSONWebKeySet, fetchedNow: false };
  const uri = client.jwksUri;
  if (!uri) throw new OAuth2Error("invalid_client", "the client has no registered keys (jwks or jwks_uri)");
  return fetchedKeys(uri, () => remoteKeySet(deps, uri));
}

/**
 * The client's `jwks_uri` set fetched anew, for an assertion whose key the set lacks; undefined when there is
 * nothing new to try (inline keys, or a fetch of this URI less than 30 seconds ago).
 */
export async function refetchedClientKeySet(
  deps: Deps,
  client: OAuth2ClientRow,
): Promise<JSONWebKeySet | undefined> {
  const uri = client.jwksUri;
  if (client.jwks || !uri) return undefined;
  return fetchedKeys(uri, () => refetchedKeySet(deps, uri));
}
