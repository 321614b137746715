import * as tables from "../db/tables/sso";
import type { Deps } from "../http/deps";
import { ssoAdminRoutes } from "./admin-routes";
import { sweepSso } from "./housekeeping";
import { ssoRoutes } from "./index";
import { refuseUnderEnforcedSso } from "./sign-in-check";

/** Enterprise sign-in through an organization's OIDC or SAML connection (contract organizations.md §2). */
export const ssoFeature = {
  name: "sso",
  tables,
  routes: () => ({ auth: ssoRoutes, admin: ssoAdminRoutes }),
  // Enforced SSO: the org's domains sign in at its IdP only.
  signInHooks: { beforeFirstFactor: refuseUnderEnforcedSso },
  housekeeping: (services: Deps, now: number) => sweepSso(services, now),
};
