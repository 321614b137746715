import { base64url } from "jose";
import { calculatePKCECodeChallenge } from "oauth4webapi";
import { resolveRedirectTo } from "../../../auth";
import type { Config } from "../../../config";
import { AppError, ERRORS, type ErrorCode } from "../../../errors";
import { decrypt, encrypt } from "../../../lib/crypto";
import { CODE_CHALLENGE_PATTERN } from "../../../lib/pkce";
import { isRedirectAllowedBy } from "../../../lib/redirect";
import { hmacSubkey } from "../../../lib/subkeys";
import { GoTrueError, toGoTrueError } from "./errors";
import { goTrueIssuer } from "./tokens";

/**
 * What the face's provider sign-in (oauth-routes.ts) needs besides the core's flow (src/providers/flow.ts): GoTrue's
 * parameters read and checked, the face's own way back (`/callback`), the implicit flow's browser-bound verifier, the
 * link ticket, and GoTrue's redirect errors.
 */

/** GoTrue's `redirect_to`, on the allow-list, or `AUTH_CLIENT_URL` as GoTrue falls back to `SITE_URL`. */
export function appTarget(config: Config, value: string | null | undefined): string {
  return resolveRedirectTo(config, value && isRedirectAllowedBy(config, value) ? value : undefined);
}

/**
 * GoTrue's PKCE parameters (internal/api/pkce.go): both or neither. Only S256: `plain` protects nothing once the
 * challenge has been seen (src/lib/pkce.ts); auth-js sends `s256` wherever WebCrypto exists.
 */
export function pkceChallenge(challenge: string | undefined, method: string | undefined): string | null {
  if (!challenge && !method) return null;
  if (!challenge || !method) {
    throw new GoTrueError(
      400,
      "validation_failed",
      "PKCE flow requires code_challenge_method and code_challenge",
    );
  }
  if (method.toLowerCase() !== "s256") {
    throw new GoTrueError(400, "validation_failed", "Invalid code_challenge_method: only s256 is supported");
  }
  if (!CODE_CHALLENGE_PATTERN.test(challenge)) {
    throw new GoTrueError(
      400,
      "validation_failed",
      "code challenge must be the base64url SHA-256 of a verifier",
    );
  }
  return challenge;
}

/** GoTrue's `scopes`: space-separated, each a plain token. */
export function scopesOf(value: string | undefined): string[] {
  if (!value) return [];
  const scopes = value.split(/[\s,]+/).filter(Boolean);
  if (value.length > 1024 || scopes.some((scope) => !/^[\w:./-]{1,200}$/.test(scope))) {
    throw new GoTrueError(400, "validation_failed", "scopes: not a list of scopes");
  }
  return scopes;
}

export type FlowType = "pkce" | "implicit";

/**
 * Where the core's callback sends the browser: the face's `/callback`, with the app's target and the flow type.
 * Anyone can open it with other values; it trusts none of them (the target is checked again, an implicit code needs
 * the starting browser's verifier, a PKCE code the app's).
 */
export function faceCallback(config: Config, redirectTo: string, flow: FlowType, binding: Binding): string {
  const url = new URL(`${goTrueIssuer(config)}/callback`);
  url.searchParams.set("redirect_to", redirectTo);
  url.searchParams.set("flow", flow);
  if (binding === "sso-flow") url.searchParams.set("via", "sso");
  return url.toString();
}

/** The browser binding a flow is started under: the provider flow's or the enterprise sign-in's. */
export type Binding = "provider-flow" | "sso-flow";

/**
 * The implicit flow's verifier: an HMAC of the starting browser's binding (src/http/browser-binding.ts), so only the
 * browser that started can turn the code at `/callback` into tokens. An attacker's own finished flow, sent to a
 * victim (login CSRF), finds another verifier there.
 */
export async function browserVerifier(config: Config, browserHash: string): Promise<string> {
  const key = await hmacSubkey(config.secrets.encryptionKey, "gotrue-oauth-hop");
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(browserHash));
  return base64url.encode(new Uint8Array(mac));
}

export const browserChallenge = async (config: Config, browserHash: string) =>
  calculatePKCECodeChallenge(await browserVerifier(config, browserHash));

/**
 * A `fetch` cannot start a flow bound to the browser: its answer's cookie is dropped across origins. So what auth-js
 * asks by `fetch` (`linkIdentity`, `signInWithSSO`) is answered with a URL of this face's `/authorize` carrying a
 * sealed ticket (AES-GCM, two minutes) of what was asked; the browser's navigation there binds it and starts the flow.
 */
const TICKET_LIFETIME_MS = 2 * 60 * 1000;

/** `linkIdentity`: the user and session it links for (the session must still be alive at `/authorize`). */
export interface LinkTicket {
  purpose: "gotrue-link";
  sub: string;
  sid: string;
}

/** `signInWithSSO`: the connection, the checked target and the app's challenge (none: implicit). */
export interface SsoTicket {
  purpose: "gotrue-sso";
  connectionId: string;
  redirectTo: string;
  codeChallenge: string | null;
}

type Ticket = LinkTicket | SsoTicket;

export function sealTicket(config: Config, ticket: Ticket, now: number): Promise<string> {
  return encrypt(config.secrets.encryptionKey, JSON.stringify({ ...ticket, exp: now + TICKET_LIFETIME_MS }));
}

export async function openTicket<P extends Ticket["purpose"]>(
  config: Config,
  sealed: string,
  purpose: P,
  now: number,
): Promise<Extract<Ticket, { purpose: P }>> {
  const ticket = await decrypt(config.secrets.encryptionKey, sealed).then(
    (text) => JSON.parse(text) as Ticket & { exp: number },
    () => undefined,
  );
  if (ticket?.purpose !== purpose || !(ticket.exp > now)) {
    throw new GoTrueError(400, "bad_oauth_state", "The request is unknown or has expired");
  }
  return ticket as unknown as Extract<Ticket, { purpose: P }>;
}

/** GoTrue's OAuth `error` for an HTTP status (internal/api/errors.go's oauthErrorMap). */
const OAUTH_ERROR: Record<number, string> = {
  400: "invalid_request",
  401: "unauthorized_client",
  403: "access_denied",
  500: "server_error",
  503: "temporarily_unavailable",
};

/** The core's refusals of a provider sign-in in GoTrue's words, where GoTrue has its own. */
const FLOW_ERRORS: Partial<Record<ErrorCode, [number, string, string]>> = {
  "invalid-state": [400, "bad_oauth_state", "OAuth state not found or expired"],
  "oauth-provider-error": [400, "bad_oauth_callback", "The provider returned an error"],
  "provider-account-already-linked": [
    422,
    "identity_already_exists",
    "Identity is already linked to another user",
  ],
  "email-already-in-use": [
    403,
    "provider_email_needs_verification",
    "Unverified email with the provider: an account with this email exists",
  ],
  "signup-disabled": [403, "signup_disabled", "Signups not allowed for this instance"],
  "disabled-user": [403, "user_banned", "User is banned"],
  unauthorized: [422, "user_not_found", "Linking target user not found"],
};

/** A refusal as GoTrue's redirect carries it: `error`, `error_code`, `error_description`. */
export interface RedirectError {
  error: string;
  error_code: string;
  error_description: string;
}

export function redirectErrorOf(error: unknown): RedirectError {
  const known = error instanceof AppError ? FLOW_ERRORS[error.code] : undefined;
  const { status, code, message } = known
    ? { status: known[0], code: known[1], message: known[2] }
    : toGoTrueError(error);
  return { error: OAUTH_ERROR[status] ?? "server_error", error_code: code, error_description: message };
}

/** The core's `error` and `errorDescription` at `/callback` (any text: the URL is anyone's to type). */
export function coreRedirectError(code: string, description: string | null): RedirectError {
  if (!Object.hasOwn(ERRORS, code))
    return redirectErrorOf(new GoTrueError(400, "bad_oauth_callback", "OAuth callback failed"));
  const refusal = redirectErrorOf(new AppError(code as ErrorCode));
  // The provider's own words, shortened by the core, say more than ours.
  return code === "oauth-provider-error" && description
    ? { ...refusal, error_description: description.slice(0, 200) }
    : refusal;
}

/**
 * GoTrue's redirect with an error (internal/api/external.go, `redirectErrors`): in the query and again in the
 * fragment, where auth-js's `detectSessionInUrl` reads it.
 */
export function withRedirectError(target: string, refusal: RedirectError): string {
  const url = new URL(target);
  for (const [name, value] of Object.entries(refusal)) url.searchParams.set(name, value);
  url.hash = new URLSearchParams({ ...refusal, sb: "" }).toString();
  return url.toString();
}
