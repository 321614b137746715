import { and, eq, isNotNull } from "drizzle-orm";
import { methodOf } from "../audit/events";
import { organizations, orgDomains } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";

/**
 * Enforced SSO (contract organizations.md §2): an organization that enforces it for its verified domains lets their
 * emails in only through its identity provider. Password, magic-link, email and SMS code, passkey, social-provider,
 * ID-token and PAT sign-ins (and the built-in page's) answer 403 `sso-required` with the start URL; their sessions,
 * and the users' PATs, are ended when enforcement begins (./sso-sweep.ts), so their next refresh fails. Auth can't import the enterprise sign-in feature (src/sso/ imports
 * auth), so the tables are read here directly: one read by the verified-domain index, on sign-ins only — never on a
 * refresh, whose hot path stays as it was.
 */

/**
 * The sign-in methods enforced SSO refuses (src/audit/events.ts `methodOf` names them from the path): every way in
 * that does not pass the org's IdP, so that offboarding there (and by SCIM) is the end of access. That includes a
 * social provider (`provider:<name>`, `methodRefusedUnderSso`), a native app's ID token and a personal access token:
 * an employee's Google or GitHub account, or a PAT made last year, is not the company's to switch off. Only
 * enterprise sign-ins (src/sso/) and the admin API's sessions are let through. The TOTP step is not among them: its
 * first factor was checked before its ticket was issued (complete-sign-in.ts), and an enterprise sign-in of a user
 * with TOTP ends there too.
 */
export const METHODS_UNDER_SSO = new Set([
  "email-password",
  "email-link",
  "email-otp",
  "sms-otp",
  "webauthn",
  "pkce-link",
  "oauth2-page",
  "id-token",
  "pat",
]);

/** Social providers' sessions are `provider:<name>` (src/audit/events.ts). */
export const PROVIDER_METHOD_PREFIX = "provider:";

export const methodRefusedUnderSso = (method: string | null): boolean =>
  method !== null && (METHODS_UNDER_SSO.has(method) || method.startsWith(PROVIDER_METHOD_PREFIX));

/** The org that enforces SSO for this email's domain, if any. */
export async function ssoEnforcingOrg(
  deps: Pick<Deps, "db">,
  email: string | null | undefined,
): Promise<string | undefined> {
  if (!email) return undefined;
  const address = email.toLowerCase();
  const row = await deps.db
    .select({ orgId: orgDomains.orgId })
    .from(orgDomains)
    .innerJoin(organizations, eq(organizations.id, orgDomains.orgId))
    .where(
      and(
        eq(orgDomains.domain, address.slice(address.lastIndexOf("@") + 1)),
        isNotNull(orgDomains.verifiedAt),
        eq(organizations.enforceSso, true),
      ),
    )
    .get();
  return row?.orgId;
}

/** `refuseIfSsoRequired` for the sign-in method (by default this request's path's), when enforced SSO refuses it. */
export async function refuseMethodUnderSso(
  deps: Pick<Deps, "db" | "config" | "path">,
  email: string | null | undefined,
  method: string | null = methodOf(deps.path),
): Promise<void> {
  if (methodRefusedUnderSso(method)) await refuseIfSsoRequired(deps, email);
}

/** 403 `sso-required`, naming where to start, when the email's org enforces SSO. */
export async function refuseIfSsoRequired(
  deps: Pick<Deps, "db" | "config">,
  email: string | null | undefined,
): Promise<void> {
  if (await ssoEnforcingOrg(deps, email)) {
    throw new AppError(
      "sso-required",
      `this email's organization signs in through its identity provider: POST ${deps.config.AUTH_SERVER_URL}/sso/start with {"email"}`,
    );
  }
}
