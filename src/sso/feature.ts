import * as tables from "../db/tables/sso";
import type { Deps } from "../http/deps";
import { ssoAdminRoutes } from "./admin-routes";
import { sweepSso } from "./housekeeping";
import { ssoRoutes } from "./index";

/** Enterprise sign-in through an organization's OIDC or SAML connection (contract organizations.md §2). */
export const ssoFeature = {
  name: "sso",
  tables,
  routes: () => ({ auth: ssoRoutes, admin: ssoAdminRoutes }),
  housekeeping: (services: Deps, now: number) => sweepSso(services, now),
};
