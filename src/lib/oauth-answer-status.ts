import * as oauth from "oauth4webapi";

/**
 * The HTTP status of the answer an oauth4webapi error is about (a provider's or an identity provider's token
 * endpoint); undefined when no answer came (the connection lost, the request's own timeout). An "unexpected HTTP
 * status code" whose body is no OAuth error (a proxy's HTML page) carries the answer as its cause.
 */
export function answerStatus(error: unknown): number | undefined {
  if (error instanceof oauth.ResponseBodyError || error instanceof oauth.WWWAuthenticateChallengeError)
    return error.status;
  if (error instanceof oauth.OperationProcessingError && error.cause instanceof Response)
    return error.cause.status;
  return undefined;
}

/**
 * A status that says "not now" rather than "no": 5xx, or 429 (RFC 6585 §4). Any other 4xx is the server's answer
 * to this request, which asking again would meet again. Shared by every outside call that tells the two apart: the
 * token endpoints (`answerSaysDown`) and the discovery documents (src/sso/oidc-discovery.ts).
 */
export function statusSaysDown(status: number): boolean {
  return status >= 500 || status === 429;
}

/** An answer that says "not now" rather than "no": 5xx, 429, or `temporarily_unavailable` (RFC 6749 §4.1.2.1). */
export function answerSaysDown(error: unknown): boolean {
  if (error instanceof oauth.ResponseBodyError && error.error === "temporarily_unavailable") return true;
  const status = answerStatus(error);
  return status !== undefined && statusSaysDown(status);
}
