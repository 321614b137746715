import * as tables from "../db/tables/orgs";
import type { Deps } from "../http/deps";
import { orgAdminRoutes } from "./admin-routes";
import { sweepOrgs } from "./housekeeping";
import { orgRoutes } from "./routes";
import { orgSettings } from "./settings";

/** Organizations, their members and invitations (contract organizations.md). */
export const orgsFeature = {
  name: "orgs",
  settings: orgSettings,
  tables,
  routes: () => ({ auth: orgRoutes, admin: orgAdminRoutes }),
  housekeeping: (services: Deps, now: number) => sweepOrgs(services, now),
};
