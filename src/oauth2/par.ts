import { and, eq, gt } from "drizzle-orm";
import { base64url } from "jose";
import { type OAuth2ClientRow, oauth2PushedRequests } from "../db/schema";
import type { Deps } from "../http/deps";
import { sha256Hex } from "../lib/crypto";
import { AuthorizeRedirect, parseAuthorizationRequest } from "./authorize";
import { findOAuth2Client, keepFetchedClient } from "./clients";
import { OAuth2Error } from "./errors";
import { OAuth2Params } from "./params";

/**
 * Pushed authorization requests (RFC 9126, contract §12). A client posts its authorization request to
 * `/oauth2/par`, authenticated as at the token endpoint; the request is checked as `/oauth2/authorize` checks it
 * and kept in D1 (`oauth2_pushed_requests`, home database) under the SHA-256 of a `request_uri` of 256 random bits,
 * for 60 seconds. The browser then brings only `client_id` and `request_uri` to `/oauth2/authorize`, which takes the
 * row once, with one `DELETE … RETURNING` (RFC 9126 §7.3: a captured request_uri cannot start a second flow), and
 * only for the client that pushed it. Housekeeping deletes rows that expired unused (src/db/housekeeping.ts).
 */
export const REQUEST_URI_PREFIX = "urn:ietf:params:oauth:request_uri:";
export const PUSHED_REQUEST_LIFETIME_S = 60;

/** How the client authenticated: never kept with the request (a `client_secret` would be stored in the clear). */
const CLIENT_AUTHENTICATION = new Set(["client_secret", "client_assertion", "client_assertion_type"]);

/** `urn:ietf:params:oauth:request_uri:` + 43 base64url characters: anything else is no request_uri of ours. */
const REQUEST_URI_SHAPE = /^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/;

/** The parameters as a form body, `resource` repeated as sent (RFC 8707 §2). */
function formOf(params: OAuth2Params): string {
  const form = new URLSearchParams();
  for (const [name, value] of params) if (!CLIENT_AUTHENTICATION.has(name)) form.append(name, value);
  for (const resource of params.resources) form.append("resource", resource);
  return form.toString();
}

/** A stored form body back as parameters; it was written from checked parameters, so holds no repeats. */
function paramsOf(form: string): OAuth2Params {
  const params = new OAuth2Params();
  for (const [name, value] of new URLSearchParams(form)) {
    if (name === "resource") params.resources.push(value);
    else params.set(name, value);
  }
  return params;
}

/**
 * `POST /oauth2/par` for `client`, already authenticated: the request is checked now, as the authorization endpoint
 * would, and every failure is a JSON error (RFC 9126 §2.3), never a redirect. Stricter than a plain request: the
 * redirect URI must be registered even for a confidential client (RFC 9126 §2.4 would allow others; nothing here
 * needs them), and PKCE is required of every client (RFC 9700 §2.1.1; FAPI 2.0 Security Profile §5.3.2.2).
 */
export async function pushAuthorizationRequest(
  deps: Deps,
  client: OAuth2ClientRow,
  params: OAuth2Params,
): Promise<{ request_uri: string; expires_in: number }> {
  // RFC 9126 §2.1: a pushed request cannot itself point at another one.
  if (params.has("request_uri")) {
    throw new OAuth2Error(
      "invalid_request",
      "request_uri must not be sent to the pushed authorization endpoint",
    );
  }
  const named = params.get("client_id");
  if (named !== undefined && named !== client.clientId) {
    throw new OAuth2Error("invalid_request", "client_id differs from the authenticated client");
  }
  // With HTTP Basic or an assertion the form may leave client_id out; the request names its client all the same.
  params.set("client_id", client.clientId);
  try {
    await parseAuthorizationRequest(deps, params, { pushedBy: client });
  } catch (error) {
    if (error instanceof AuthorizeRedirect) throw new OAuth2Error(error.error, error.description);
    throw error;
  }
  if (!params.has("code_challenge")) {
    throw new OAuth2Error("invalid_request", "a pushed request must use PKCE (code_challenge with S256)");
  }
  await keepFetchedClient(deps, client);
  const requestUri = `${REQUEST_URI_PREFIX}${base64url.encode(crypto.getRandomValues(new Uint8Array(32)))}`;
  await deps.db
    .insert(oauth2PushedRequests)
    .values({
      requestUriHash: await sha256Hex(requestUri),
      clientId: client.clientId,
      params: formOf(params),
      expiresAt: deps.now() + PUSHED_REQUEST_LIFETIME_S * 1000,
    })
    .run();
  return { request_uri: requestUri, expires_in: PUSHED_REQUEST_LIFETIME_S };
}

/**
 * The authorization request `/oauth2/authorize` is to check. Without a PAR `request_uri`, the parameters it was sent.
 * With one, the pushed request it names, taken once, for the client `client_id` names and only while fresh; the other
 * parameters of the URL are ignored (RFC 9126 §4), so nothing on the front channel can override what was pushed.
 * Unknown, expired, used or another client's: `invalid_request_uri` as JSON (RFC 9101 §6.2), since nothing about
 * the request, its redirect URI included, can be trusted then.
 */
export async function authorizationParams(
  deps: Deps,
  sent: OAuth2Params,
): Promise<{ params: OAuth2Params; pushedBy?: OAuth2ClientRow }> {
  const requestUri = sent.get("request_uri");
  // Not PAR's: a request object by reference, which is never fetched (authorize.ts: request_uri_not_supported).
  if (requestUri === undefined || !requestUri.startsWith(REQUEST_URI_PREFIX)) return { params: sent };
  const clientId = sent.get("client_id");
  if (!clientId) throw new OAuth2Error("invalid_request", "client_id is required with request_uri");
  const client = await findOAuth2Client(deps, clientId);
  if (!client) throw new OAuth2Error("invalid_client", "unknown client_id");
  const unusable = new OAuth2Error(
    "invalid_request_uri",
    "the request_uri is unknown, expired, already used, or was pushed by another client",
  );
  if (!REQUEST_URI_SHAPE.test(requestUri)) throw unusable;
  const taken = await deps.db
    .delete(oauth2PushedRequests)
    .where(
      and(
        eq(oauth2PushedRequests.requestUriHash, await sha256Hex(requestUri)),
        eq(oauth2PushedRequests.clientId, client.clientId),
        gt(oauth2PushedRequests.expiresAt, deps.now()),
      ),
    )
    .returning({ params: oauth2PushedRequests.params })
    .get();
  if (!taken) throw unusable;
  return { params: paramsOf(taken.params), pushedBy: client };
}
