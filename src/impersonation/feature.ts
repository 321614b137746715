import * as tables from "../db/tables/impersonation";
import type { Deps } from "../http/deps";
import { impersonationAdminRoutes } from "./admin-routes";
import { sweepImpersonations } from "./end";
import { landingRoutes } from "./landing";
import { impersonationSettings } from "./settings";

/** Impersonation: support acting as a user, visibly (contract operators.md §1). */
export const impersonationFeature = {
  name: "impersonation",
  settings: impersonationSettings,
  tables,
  routes: () => ({ auth: landingRoutes, admin: impersonationAdminRoutes }),
  // Its end is due at a minute: the audit's end event and the user's mail come then, not at tomorrow's sweep.
  everyMinute: (services: Deps, now: number) => sweepImpersonations(services, now),
};
