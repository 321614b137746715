import * as tables from "../db/tables/admin";
import type { Deps } from "../http/deps";
import { adminApi } from "./app";
import { consoleRoutes } from "./console/console-routes";
import { sweepConsoleSessions } from "./housekeeping";

/** The admin API's own routes and the admin console (contract §10). */
export const adminFeature = {
  name: "admin",
  tables,
  routes: () => ({ admin: adminApi, console: consoleRoutes }),
  housekeeping: (services: Deps, now: number) => sweepConsoleSessions(services, now),
};
