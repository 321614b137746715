import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * The error catalog of contract §4: code → HTTP status and default message. The type of `ErrorCode` is derived
 * from this table, so a code that is not in the catalog does not compile.
 */
export const ERRORS = {
  "default-role-must-be-in-allowed-roles": [400, "default role must be in allowed roles"],
  "disabled-endpoint": [409, "this endpoint is disabled"],
  "disabled-user": [401, "user is disabled"],
  "email-already-in-use": [409, "email already in use"],
  "email-already-verified": [400, "email is already verified"],
  "forbidden-anonymous": [403, "forbidden for anonymous users"],
  "internal-server-error": [500, "internal server error"],
  "invalid-email-password": [401, "incorrect email or password"],
  "invalid-request": [400, "the request payload is incorrect"],
  "locale-not-allowed": [400, "locale not allowed"],
  "password-too-short": [400, "password is too short"],
  "password-in-hibp-database": [400, "password is in a known data breach"],
  "redirectTo-not-allowed": [400, "the value of redirectTo is not allowed"],
  "role-not-allowed": [400, "role not allowed"],
  "signup-disabled": [403, "sign up is disabled"],
  "unverified-user": [401, "email is not verified"],
  "user-not-anonymous": [400, "logged in user is not anonymous"],
  "invalid-pat": [401, "invalid or expired personal access token"],
  "invalid-refresh-token": [401, "invalid or expired refresh token"],
  "invalid-ticket": [401, "invalid or expired ticket"],
  "disabled-mfa-totp": [401, "TOTP MFA is not active"],
  "no-totp-secret": [400, "no TOTP secret; generate one first"],
  "invalid-totp": [401, "invalid TOTP code"],
  // Also a first factor refused because the account's only second factor is a `webauthn` key, which the Nhost API
  // cannot ask for (src/auth/sign-in/pipeline.ts; docs/decisions.md, "Issue 43: every factor on both faces").
  "mfa-type-not-found": [400, "MFA type not found"],
  "totp-already-active": [400, "TOTP MFA is already active"],
  // Not in the reference catalog: a user imported from Nhost whose TOTP secret could not be decrypted (contract
  // move-in §2): rather than let the password alone in, sign-in stops here until an admin resets their MFA.
  "mfa-reset-required": [
    401,
    "two-factor authentication must be reset by an administrator before signing in",
  ],
  "invalid-state": [400, "invalid or expired state"],
  "oauth-token-echange-failed": [400, "failed to exchange the provider code"],
  "oauth-profile-fetch-failed": [400, "failed to fetch the provider profile"],
  "oauth-provider-error": [400, "the provider returned an error"],
  "invalid-otp": [400, "invalid or expired code"],
  "cannot-send-sms": [400, "cannot send SMS"],
  "provider-account-already-linked": [400, "this provider account is already linked to another user"],
  unauthorized: [401, "missing or invalid access token"],
  "too-many-requests": [429, "too many requests"],
  "account-locked": [429, "too many failed attempts: this sign-in method is locked for a while"],
  // Not in the reference catalog: an unknown path or method. Documented in docs/decisions.md.
  "route-not-found": [404, "route not found"],
  "payload-too-large": [413, "request body too large"],
  // Not in the reference catalog: `POST /signup/passwordless/sms` for a number that has an account (the email
  // twin is email-already-in-use). Documented in docs/decisions.md.
  "phone-number-already-in-use": [409, "phone number already in use"],
  // Not in the reference catalog: an admin API resource (contract §10) that does not exist.
  "not-found": [404, "not found"],
  // Not in the reference catalog: Turnstile (contract §9), which the reference answers with generic errors or a 500.
  "turnstile-required": [400, "a Turnstile token is required (header x-cf-turnstile-response)"],
  "turnstile-failed": [403, "the Turnstile challenge was not passed; solve it again"],
  "turnstile-unavailable": [503, "the Turnstile challenge cannot be checked right now; try again"],
  // Contract §4 and move-in §5.3: the app's BEFORE_USER_CREATED hook refused the sign-up; the message is the app's.
  forbidden: [403, "forbidden"],
  // Not in the reference catalog: organizations (contract organizations.md §1). An org the caller is no member of
  // answers `not-found`, never these: they are for members (and the switch of a session into an org).
  "insufficient-org-role": [403, "your role in this organization does not allow this"],
  "not-org-member": [403, "not an active member of this organization"],
  "last-owner": [409, "an organization keeps at least one owner"],
  "slug-already-in-use": [409, "this organization slug is already in use"],
  "invitation-email-mismatch": [403, "this invitation is for another, verified email address"],
  // Contract organizations.md §2 (enterprise sign-in); not in Nhost's catalog.
  "sso-required": [403, "this email's organization signs in through its identity provider"],
  // Issue 47 (docs/risk.md): the sign-in's risk policy, or the app's BEFORE_SIGN_IN hook, refused it.
  "risk-refused": [403, "this sign-in was refused as too risky; try again from a device you used before"],
  "sso-connection-not-found": [404, "no enterprise connection signs in this email, domain or organization"],
  "sso-email-outside-domains": [
    403,
    "the identity provider asserted an email outside the organization's verified domains",
  ],
  "sso-assertion-invalid": [400, "the identity provider's answer could not be verified"],
  "domain-not-allowed": [400, "this domain can't be claimed (a public mail domain, or not a domain name)"],
  "domain-already-verified": [409, "this domain is verified by another organization"],
  "domain-verification-failed": [400, "the TXT record was not found; add it and try again"],
  // Contract operators.md §5: a connection made through a setup link is enabled only after its test round trip.
  "sso-connection-untested": [409, "this connection has not passed its test round trip yet; test it first"],
  // Contract §1 "Unavailable": a part of the platform this request needs failed or did not answer in time.
  "service-unavailable": [503, "the service cannot answer this right now; try again shortly"],
} as const satisfies Record<string, readonly [ContentfulStatusCode, string]>;

export type ErrorCode = keyof typeof ERRORS;

/** A failure the client should see. `reason` is for the log only and never leaves the service. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: ContentfulStatusCode;
  readonly reason?: string;

  constructor(code: ErrorCode, message?: string, reason?: string) {
    const [status, fallback] = ERRORS[code];
    super(message ?? fallback);
    this.name = "AppError";
    this.code = code;
    this.status = status;
    this.reason = reason;
  }
}

/** 429 `too-many-requests`; the error handler turns `retryAfterSeconds` into the `Retry-After` header. */
export class RateLimitedError extends AppError {
  constructor(
    readonly retryAfterSeconds: number,
    message?: string,
    code: "too-many-requests" | "account-locked" = "too-many-requests",
  ) {
    super(code, message);
  }

  /** A factor of an account locked after failures (contract §13): the same answer for a known and an unknown account. */
  static accountLocked(retryAfterSeconds: number): RateLimitedError {
    return new RateLimitedError(retryAfterSeconds, undefined, "account-locked");
  }

  /** Names the bucket (contract §11), so whoever meets the limit knows which setting it is. */
  static forBucket(bucket: string, retryAfterSeconds: number): RateLimitedError {
    return new RateLimitedError(
      retryAfterSeconds,
      `too many requests (rate-limit bucket ${bucket}): retry after ${retryAfterSeconds} s`,
    );
  }
}

/**
 * 503 `service-unavailable` (contract §1): a binding this request needs failed; `Retry-After` says when to try again.
 * `reason` (the log only) names the part that failed.
 */
export class UnavailableError extends AppError {
  constructor(
    reason: string,
    readonly retryAfterSeconds = 5,
  ) {
    super("service-unavailable", undefined, reason);
  }
}

export interface ErrorBody {
  status: number;
  message: string;
  error: ErrorCode;
}

export function errorBody(error: AppError): ErrorBody {
  return { status: error.status, message: error.message, error: error.code };
}

/** Codes that reveal account state; `AUTH_CONCEAL_ERRORS=true` answers them as `400 invalid-request` (contract §4). */
const ACCOUNT_STATE_CODES = new Set<ErrorCode>([
  "disabled-user",
  "email-already-in-use",
  "phone-number-already-in-use",
  "email-already-verified",
  "forbidden-anonymous",
  "invalid-email-password",
  "invalid-pat",
  "role-not-allowed",
  "signup-disabled",
  "unverified-user",
  "invalid-refresh-token",
  "invalid-ticket",
  "disabled-mfa-totp",
  "invalid-totp",
  "invalid-otp",
  "no-totp-secret",
]);

export function concealIfConfigured(error: AppError, conceal: boolean): AppError {
  return conceal && ACCOUNT_STATE_CODES.has(error.code)
    ? new AppError("invalid-request", undefined, error.reason)
    : error;
}

/** A configuration variable the service cannot run with; the message names it (src/config.ts parses them all). */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * What the platform says when a binding failed for now rather than for good (workerd's and Cloudflare's own wording):
 * D1's and a Durable Object's resets, overloads and lost connections, KV's and R2's failed operations, timeouts.
 * A constraint, a syntax error or a refused configuration is none of these: a retry would meet it again, so it stays
 * a 500 (a bug or a deployment to fix), with its reason in the log.
 */
const TRANSIENT_MESSAGES =
  /network connection lost|overloaded|reset because|exceeded timeout|transient issue|internal error|try again|timed out|timeout|temporarily unavailable|service unavailable|KV (GET|PUT|DELETE|LIST) failed|too many requests queued|memory limit would be exceeded|client disconnected/i;

/**
 * A binding's failure as the 503 the contract promises (§1 "Unavailable"), or undefined for anything else. A Durable
 * Object stub's error says so itself (`retryable`, `overloaded`, workerd's properties); the rest by its message. A
 * library's wrapper (Drizzle's "Failed query") keeps the binding's error as its `cause`, which is followed.
 */
export function platformFault(error: unknown): UnavailableError | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const flags = e as Error & { retryable?: boolean; overloaded?: boolean; durableObjectReset?: boolean };
    const transient =
      flags.retryable === true ||
      flags.overloaded === true ||
      flags.durableObjectReset === true ||
      e.name === "TimeoutError" ||
      TRANSIENT_MESSAGES.test(e.message);
    // An overloaded object asks for a longer pause than a dropped connection (workerd's `overloaded`).
    if (transient)
      return new UnavailableError(`platform: ${e.message.slice(0, 300)}`, flags.overloaded ? 10 : 5);
  }
  return undefined;
}
