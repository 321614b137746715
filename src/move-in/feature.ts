import type { Config } from "../config";
import * as tables from "../db/tables/move-in";
import { importAdminRoutes } from "./import-routes";
import { nhostLinkRoutes } from "./nhost-links";

/** Moving in from Nhost (contract move-in): the import's admin API, and Nhost's old links at the host's root. */
export const moveInFeature = {
  name: "move-in",
  tables,
  routes: (config: Config) => ({ root: nhostLinkRoutes(config.AUTH_API_PREFIX), admin: importAdminRoutes }),
};
