import type { Actor } from "./actor";
import type { Outcome } from "./outcome";

/**
 * The security events of contract §10's audit log. Each is written by the flow that causes it (see `record.ts`), to
 * D1 and as one JSON log line.
 */
export type AuditEventType =
  | "signin.success"
  | "signin.failure"
  | "signin.failure.repeated"
  | "signup"
  | "elevation"
  | "refresh.replay"
  | "password.change"
  | "password.reset"
  | "email.change"
  | "phone.change"
  | "mfa.enabled"
  | "mfa.disabled"
  | "security-key.added"
  | "pat.created"
  /** A sign-in factor locked after failures (contract §13): detail {factor, minutes}. */
  | "signin.locked"
  /** A locked factor unlocked by the mailed link: detail {factor}. */
  | "signin.unlocked"
  /** The user revoked one of their personal access tokens (the account center): detail {patId}. */
  | "pat.revoked"
  /** The user ended one of their sessions (`DELETE /user/sessions/{id}`): detail {sessionId}. */
  | "session.revoke"
  /** The user ended every other session (`DELETE /user/sessions?others=true`): detail {kept}. */
  | "session.revoke-others"
  /** The user deleted their own account in the account center: detail {email}. */
  | "account.delete"
  | "provider.linked"
  /** The user unlinked a provider identity (the account center): detail {provider, providerUserId}. */
  | "provider.unlinked"
  | "oauth2.consent"
  /** A relying party disconnected the user through the browser (FedCM, src/fedcm/): detail {clientId}. */
  | "oauth2.consent-revoked"
  | "oauth2.grant-revoked"
  | "oauth2.client-registered"
  | "oauth2.client-deleted"
  | "oauth2.device-approved"
  | "oauth2.ciba-requested"
  | "oauth2.ciba-approved"
  | "oauth2.ciba-denied"
  /**
   * A JWT bearer or ID-JAG assertion redeemed for a token (contract §12): detail {clientId, issuer, idJag, jti,
   * scopes, resources}: which outside issuer vouched for the user, for an operator to see and to answer for.
   */
  | "oauth2.assertion"
  /**
   * A sign-in's risk assessed after its first factor (src/risk/): detail {method, level, reasons, decision, by,
   * hookReason?, signals}; a refusal is a failure with reason `risk-refused`.
   */
  | "signin.risk"
  /** One call of an app's hook (src/hooks/): detail {hook, outcome, status, ms, reason?}. */
  | "hook.called"
  /** The token vault (src/vault/): an account connected {provider, providerUserId, scopes, clientIds}. */
  | "vault.connected"
  /** A connection removed by its user {provider, revokedAtProvider}. */
  | "vault.disconnected"
  /** A provider's token given to a client by token exchange {provider, clientId, refreshed}, or refused {reason}. */
  | "vault.released"
  | "vault.refused"
  /** What an IdP changed through SCIM (src/scim/audit.ts): detail {orgId, groupId?}. */
  | `scim.${"user" | "group"}.${"create" | "replace" | "update" | "delete"}`
  | `admin.${string}`
  /**
   * A setup link made, revoked, or used by a customer's IT admin (contract operators.md §5): detail {orgId, linkId,
   * …what it did}; a refused link (unknown, wrong, expired or revoked) is `setup-link.refused`.
   */
  | `setup-link.${string}`;

export interface AuditEvent {
  type: AuditEventType;
  /** The event's subject: the user it concerns (who acted is the request's actor, `actor.ts`). */
  userId?: string | null;
  detail?: Record<string, unknown>;
  /** Only where the type and detail do not say it (outcome.ts decides otherwise). */
  outcome?: Outcome;
  reason?: string;
}

/** Where a request came from, as the audit log records it. */
export interface RequestOrigin {
  ip: string | null;
  userAgent: string | null;
}

/** What a failed sign-in attempt said (sign-in-failures.ts decides what of it is kept). */
export interface SignInAttempt {
  method: string;
  error: string;
  email?: string;
  /** The signed-in user the attempt was made by, if any (a wrong code while elevating, say). */
  userId?: string | null;
}

/** Records one event after the answer; never fails the request it describes. */
export interface Audit {
  (event: AuditEvent): void;
  /**
   * Who acts in this request or job from now on (actor.ts): called by whatever authenticated the caller (the admin
   * secret, a console session, a SCIM token, an access token, the binding's caller), never by a flow.
   */
  actAs(actor: Actor): void;
  /** The actor events are recorded under now. */
  actor(): Actor;
  /** A sign-in whose credentials did not work: bounded per address, unknown addresses hashed (sign-in-failures.ts). */
  signInFailure(attempt: SignInAttempt): void;
}

/** The answers to a sign-in attempt that mean "these credentials did not work" (not a malformed request, not a 429). */
export const SIGN_IN_FAILURES = new Set([
  "invalid-email-password",
  "invalid-otp",
  "invalid-ticket",
  "invalid-totp",
  "invalid-pat",
  "disabled-user",
  "unverified-user",
]);
