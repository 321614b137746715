/**
 * The sign-in methods enforced SSO (contract organizations.md §2) refuses for an enforcing org's domains: every way
 * in that does not pass the org's IdP, so that offboarding there (and by SCIM) is the end of access. That includes a
 * social provider (`provider:<name>`), a native app's ID token and a personal access token: an employee's Google or
 * GitHub account, or a PAT made last year, is not the company's to switch off. Only enterprise sign-ins (src/sso/)
 * and the admin API's sessions are let through. The TOTP step is not among them: its first factor was checked before
 * its ticket was issued (sign-in/pipeline.ts), and an enterprise sign-in of a user with TOTP ends there too.
 * The refusal itself is the sso feature's sign-in check (src/sso/sign-in-check.ts); the list is here because the
 * sweep of the sessions these methods began (./sso-sweep.ts) is core's.
 */
export const METHODS_UNDER_SSO = new Set([
  "email-password",
  "email-link",
  "email-otp",
  "sms-otp",
  "webauthn",
  "webauthn-upgrade",
  "pkce-link",
  "oauth2-page",
  "id-token",
  "pat",
]);

/** Social providers' sessions are `provider:<name>` (sign-in/method.ts). */
export const PROVIDER_METHOD_PREFIX = "provider:";

export const methodRefusedUnderSso = (method: string | null): boolean =>
  method !== null && (METHODS_UNDER_SSO.has(method) || method.startsWith(PROVIDER_METHOD_PREFIX));
