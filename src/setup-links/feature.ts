import * as tables from "../db/tables/setup-links";
import type { Deps } from "../http/deps";
import { setupLinkAdminRoutes, setupLinkRoutes } from "./api-routes";
import { sweepLinks } from "./links";
import { setupPageRoutes } from "./page-routes";

/**
 * Setup links for a customer's IT department (contract operators.md §5; docs/setup-links.md): an org owner (or the
 * operator) makes a link; whoever holds it sets up the org's domains, SSO connection and SCIM token through hosted
 * pages, inside the bounds the link sets.
 */
export const setupLinksFeature = {
  name: "setup-links",
  tables,
  routes: () => ({ auth: setupLinkRoutes, pages: setupPageRoutes, admin: setupLinkAdminRoutes }),
  housekeeping: (services: Deps, now: number) => sweepLinks(services, now),
};
