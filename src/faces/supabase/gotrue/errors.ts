import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { CeremonyError, type CeremonyStage } from "../../../auth";
import { AppError, type ErrorCode } from "../../../errors";

/**
 * GoTrue's errors (contract supabase.md §2, Supabase Auth's internal/api/errors.go): an app's error handling reads
 * `error_code` (auth-js's `AuthApiError.code`) and the status, so each of the core's errors is answered with the code
 * GoTrue gives for the same refusal. auth-js sends `X-Supabase-Api-Version: 2024-01-01`: then the body is
 * `{code: <error_code>, message}` and the version is echoed; without it, the older `{code: <status>, error_code, msg}`.
 * `x-sb-error-code` carries the code either way.
 */

/** A refusal in GoTrue's words, thrown by the face's own checks (the apikey, a token's session). */
export class GoTrueError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly reasons?: string[],
  ) {
    super(message);
  }
}

/** The core's refusals in GoTrue's terms; an error not listed keeps its status and gets GoTrue's code for it. */
const FROM_CORE: Partial<Record<ErrorCode, [ContentfulStatusCode, string, string]>> = {
  "invalid-email-password": [400, "invalid_credentials", "Invalid login credentials"],
  "email-already-in-use": [422, "user_already_exists", "User already registered"],
  "phone-number-already-in-use": [422, "phone_exists", "Phone number already registered by another user"],
  "unverified-user": [400, "email_not_confirmed", "Email not confirmed"],
  "disabled-user": [403, "user_banned", "User is banned"],
  "signup-disabled": [422, "signup_disabled", "Signups not allowed for this instance"],
  "invalid-refresh-token": [400, "refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found"],
  "invalid-request": [400, "validation_failed", "Unable to validate the request"],
  "redirectTo-not-allowed": [400, "validation_failed", "The redirect URL is not allowed"],
  unauthorized: [401, "no_authorization", "This endpoint requires a valid Bearer token"],
  "too-many-requests": [429, "over_request_rate_limit", "Request rate limit reached"],
  "account-locked": [429, "over_request_rate_limit", "Too many failed attempts; try again later"],
  "turnstile-required": [
    400,
    "captcha_failed",
    "captcha protection: request disallowed (captcha token missing)",
  ],
  "turnstile-failed": [400, "captcha_failed", "captcha protection: request disallowed"],
  "route-not-found": [404, "not_found", "Not found"],
  "not-found": [404, "not_found", "Not found"],
  "payload-too-large": [413, "request_too_large", "Request body too large"],
  "forbidden-anonymous": [403, "anonymous_provider_disabled", "Anonymous users cannot do this"],
  "disabled-endpoint": [422, "provider_disabled", "This sign-in method is disabled"],
  // GoTrue's code for an account its organization's SSO manages; the way in is signInWithSSO.
  "sso-required": [
    403,
    "user_sso_managed",
    "This account signs in through its organization's identity provider: use signInWithSSO",
  ],
};

/**
 * A refusal GoTrue answers with the refuser's own words. The risk gate's refusal (docs/risk.md) is, to GoTrue, an auth
 * hook rejecting a sign-in: GoTrue answers its MFA verification hook's `reject` 403 `mfa_verification_rejected` with
 * the hook's message (internal/api/mfa.go), its one code for "a hook refused this sign-in". Its password hook's
 * rejection reuses `invalid_credentials` (400), which here would tell the app the password was wrong (it was right:
 * the gate runs after it) and send the user to reset it; the core's 403 stays, and so does its message (why, and
 * whether another device would do).
 */
const REJECTED: Partial<Record<ErrorCode, string>> = { "risk-refused": "mfa_verification_rejected" };

/** A WebAuthn ceremony that failed, named as GoTrue names it (the Nhost API answers one 400 for all). */
const CEREMONY: Record<CeremonyStage, [ContentfulStatusCode, string, string]> = {
  challenge: [400, "webauthn_challenge_not_found", "Challenge not found or already used"],
  registered: [422, "webauthn_credential_exists", "This credential is already registered"],
  response: [400, "webauthn_verification_failed", "Credential verification failed"],
};

/** A weak password's reasons, as GoTrue names them (`length`, `characters`, `pwned`). */
const WEAK: Partial<Record<ErrorCode, string>> = {
  "password-too-short": "length",
  "password-in-hibp-database": "pwned",
};

function byStatus(status: number): string {
  if (status >= 500) return "unexpected_failure";
  if (status === 401) return "no_authorization";
  if (status === 429) return "over_request_rate_limit";
  return status === 400 ? "validation_failed" : "unknown";
}

/** What the face answers for `error` (an AppError or a GoTrueError; anything else is a fault). */
export function toGoTrueError(error: unknown): GoTrueError {
  if (error instanceof GoTrueError) return error;
  if (!(error instanceof AppError)) {
    return new GoTrueError(
      500,
      "unexpected_failure",
      "Unexpected failure, please check server logs for more information",
    );
  }
  if (error instanceof CeremonyError) return new GoTrueError(...CEREMONY[error.stage]);
  const weak = WEAK[error.code];
  if (weak) return new GoTrueError(422, "weak_password", error.message, [weak]);
  const rejected = REJECTED[error.code];
  if (rejected) return new GoTrueError(403, rejected, error.message);
  const known = FROM_CORE[error.code];
  if (known) return new GoTrueError(known[0], known[1], known[2]);
  return new GoTrueError(error.status, byStatus(error.status), error.message);
}

const API_VERSION_HEADER = "X-Supabase-Api-Version";
const VERSION_2024 = "2024-01-01";

/** The answer in the shape the caller's API version asks for. */
export function goTrueErrorResponse(
  c: Context,
  error: GoTrueError,
  headers: Record<string, string>,
): Response {
  // An unreadable version is the initial one, as GoTrue reads it.
  const asked = c.req.header(API_VERSION_HEADER) ?? "";
  const versioned = /^\d{4}-\d{2}-\d{2}$/.test(asked) && asked >= VERSION_2024;
  const weak = error.reasons ? { weak_password: { reasons: error.reasons } } : {};
  const body = versioned
    ? { code: error.code, message: error.message, ...weak }
    : { code: error.status, error_code: error.code, msg: error.message, ...weak };
  const answer = c.json(body, error.status, { ...headers, "x-sb-error-code": error.code });
  if (versioned) answer.headers.set(API_VERSION_HEADER, VERSION_2024);
  return answer;
}
