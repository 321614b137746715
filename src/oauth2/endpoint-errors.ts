import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { AppError, platformFault, UnavailableError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { logError } from "../http/context";
import { OAuth2Error, oauth2ErrorResponse } from "./errors";

/**
 * The error handler of the endpoints a client calls with its credentials or a bearer token (token, device
 * authorization, PAR, introspection, revocation, userinfo, registration): a binding that failed for now (D1, a Durable
 * Object, KV) is answered in RFC 6749's shape, as their clients read it, 503 `temporarily_unavailable` with
 * `Retry-After` (wire.ts `OAUTH2_DIRECT_ERRORS`), and a failure of the service itself (a bug) as 500 `server_error`
 * naming the request (its log line has the cause), where it was the auth API's `{status, message, error}` that these
 * clients do not read. Every other failure goes on to the app's handler (src/runtime/app.ts), which renders an
 * `OAuth2Error` in the same shape and the auth API's refusals (a rate limit's 429) as it does everywhere. Set on
 * their sub-app (oauth2-routes.ts), it holds for their routes whatever their paths: Hono's `route()` keeps a
 * sub-app's `onError` for the routes it mounts.
 */
export function endpointErrors(caught: Error, c: Context<AppEnv>): Response {
  if (caught instanceof OAuth2Error) throw caught;
  const error =
    caught instanceof AppError || (caught instanceof HTTPException && caught.status < 500)
      ? caught
      : platformFault(caught);
  // A refusal (the auth API's, such as a rate limit's 429) goes on to the app's handler.
  if (error && error.status < 500) throw caught;
  if (!(error instanceof UnavailableError)) return serverError(caught, c);
  logError(c.var.requestId, error.code, error.reason ?? caught);
  return oauth2ErrorResponse(
    new OAuth2Error("temporarily_unavailable", error.message, undefined, error.reason, 503),
    error.retryAfterSeconds,
  );
}

/** A failure of the service's own (no refusal, no platform fault): RFC 6749's shape, the request id to report. */
function serverError(caught: Error, c: Context<AppEnv>): Response {
  logError(c.var.requestId, "internal-server-error", caught);
  return oauth2ErrorResponse(
    new OAuth2Error(
      "server_error",
      `the service failed; reference ${c.var.requestId}`,
      undefined,
      undefined,
      500,
    ),
  );
}
