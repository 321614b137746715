import { and, eq, isNotNull } from "drizzle-orm";
import { methodRefusedUnderSso, type SignInCheck } from "../auth";
import { organizations, orgDomains } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";

/**
 * Enforced SSO (contract organizations.md §2) at every sign-in: an organization that enforces it for its verified
 * domains lets their emails in only through its identity provider. Declared in ./feature.ts as the sign-in check
 * before the first factor (src/auth/sign-in/pipeline.ts runs it, knowing nothing of this feature): a password,
 * magic-link, email or SMS code, passkey, social-provider, ID-token or PAT sign-in (and the built-in page's) answers
 * 403 `sso-required` with the start URL, before its credentials are looked at; the session step asks again only for
 * an address not asked about yet. One read by the verified-domain index, on sign-ins only, never on a refresh.
 * Sessions and PATs that predate enforcement are ended when it begins (src/auth/sso-sweep.ts).
 */
export const refuseUnderEnforcedSso: SignInCheck = async (deps, { method, email }) => {
  if (!methodRefusedUnderSso(method)) return;
  if (await ssoEnforcingOrg(deps, email)) {
    throw new AppError(
      "sso-required",
      `this email's organization signs in through its identity provider: POST ${deps.config.urls.server}/sso/start with {"email"}`,
    );
  }
};

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
