/**
 * Errors of the authorization server (contract §3.5): RFC 6749 codes in `{error, error_description}`, 400 except
 * `invalid_client` and `invalid_token` (401, with `WWW-Authenticate`). Thrown like `AppError`; the app's error
 * handler renders them with `oauth2ErrorResponse`.
 */
export type OAuth2ErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "unsupported_response_type"
  | "invalid_scope"
  | "access_denied"
  | "login_required"
  | "consent_required"
  | "invalid_token"
  | "insufficient_scope"
  | "server_error"
  /** RFC 8707: a resource the server does not serve, or wider than the authorization. */
  | "invalid_target"
  /** RFC 7591 §3.2.2 */
  | "invalid_redirect_uri"
  | "invalid_client_metadata"
  /** RFC 6749 §4.1.2.1: the server cannot handle the request now (a check it depends on is unreachable). */
  | "temporarily_unavailable"
  /** RFC 9101 §6.2: a `request_uri` that names no usable pushed request (RFC 9126 §4). */
  | "invalid_request_uri"
  /** OIDC Core §3.1.2.6: request objects, by value or by reference, are not supported (only PAR's request_uri). */
  | "request_not_supported"
  | "request_uri_not_supported"
  /** RFC 8628 §3.5 */
  | "authorization_pending"
  | "slow_down"
  | "expired_token"
  /** OpenID CIBA Core §13: a `binding_message` the server will not show. */
  | "invalid_binding_message"
  /** RFC 9449 §5, §7.1: a DPoP proof that is missing, malformed, replayed or for another key. */
  | "invalid_dpop_proof"
  /** RFC 9449 §8, §9: retry with the server's nonce (`DPoP-Nonce`). */
  | "use_dpop_nonce"
  /** RFC 9396 §5: authorization details of a type the client may not use, malformed, or not matching the type. */
  | "invalid_authorization_details";

export class OAuth2Error extends Error {
  constructor(
    readonly error: OAuth2ErrorCode,
    readonly description: string,
    /** `invalid_client` when the client tried HTTP Basic: the challenge names that scheme (RFC 6749 §5.2). */
    readonly challenge?: string,
    /** For the log only (a replay worth a warning); never sent. */
    readonly reason?: string,
    /** Another status than the code's usual one (registration switched off: 403; the service's own fault: 500). */
    readonly statusOverride?: 400 | 401 | 403 | 404 | 500 | 503,
    /** Further headers of the answer (`DPoP-Nonce`, RFC 9449 §8). */
    readonly headers?: Record<string, string>,
  ) {
    super(description);
    this.name = "OAuth2Error";
  }

  get status(): 400 | 401 | 403 | 404 | 500 | 503 {
    if (this.statusOverride) return this.statusOverride;
    if (this.error === "invalid_client" || this.error === "invalid_token") return 401;
    if (this.error === "insufficient_scope") return 403;
    return 400;
  }
}

/** `retryAfterSeconds`: a 503's `Retry-After` (a binding failed for now; contract §1 "Unavailable"). */
export function oauth2ErrorResponse(error: OAuth2Error, retryAfterSeconds = 5): Response {
  const headers = new Headers({ "Cache-Control": "no-store", Pragma: "no-cache" });
  if (error.status === 503) headers.set("Retry-After", String(retryAfterSeconds));
  if (error.error === "invalid_client")
    headers.set("WWW-Authenticate", error.challenge ?? 'Basic realm="oauth2"');
  for (const [name, value] of Object.entries(error.headers ?? {})) headers.set(name, value);
  // A resource's DPoP challenge (RFC 9449 §7.1) is made where the request's scheme is known (oauth2/dpop.ts).
  if (error.challenge && error.error !== "invalid_client") headers.set("WWW-Authenticate", error.challenge);
  else if (error.error === "invalid_token" || error.error === "insufficient_scope") {
    headers.set(
      "WWW-Authenticate",
      `Bearer error="${error.error}", error_description="${error.description}"`,
    );
  }
  return Response.json(
    { error: error.error, error_description: error.description },
    { status: error.status, headers },
  );
}
