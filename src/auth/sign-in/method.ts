/**
 * How a session began: written to `sessions.method`, the audit's `signin.success` / `signin.failure` / `user.created`
 * events and the custom-access-token hook's `authenticationMethod`. Each flow names its own (the route builds its
 * sign-in scope with it, ./scope.ts); nothing reads it back from a URL. The values are stored: the session list, the
 * enforced-SSO sweep (../sso-sweep.ts) and old rows depend on them, so a value never changes its spelling.
 */
export type Method =
  | "email-password"
  | "email-link"
  | "pkce-link"
  | "email-otp"
  | "sms-otp"
  | "mfa-totp"
  | "mfa-sms"
  | "mfa-webauthn"
  /** The email second step (issue 47): a code mailed to the verified address after a first factor. */
  | "mfa-email"
  /** The passkey second step with user verification (issue 47): phishing-resistant; `mfa-webauthn` without it. */
  | "mfa-passkey"
  | "webauthn"
  /** A passkey made by an upgrade, not yet used with user verification (src/auth/webauthn/upgrade.ts): not `phr`. */
  | "webauthn-upgrade"
  | "pat"
  | "anonymous"
  | "id-token"
  | `provider:${string}`
  | "sso:saml"
  | "sso:oidc"
  | "oauth2-page"
  | "hosted-page"
  | "admin"
  | "import:nhost"
  /** An operator acting as the user (contract operators.md §1): no sign-in, see `startImpersonatedSession`. */
  | "impersonation";

/** A social provider's sessions are `provider:<name>`. */
export const providerMethod = (provider: string): Method => `provider:${provider}`;
