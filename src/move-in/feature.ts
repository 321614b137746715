import { Hono } from "hono";
import type { Config } from "../config";
import * as tables from "../db/tables/move-in";
import type { AppEnv } from "../http/app-env";
import { cutOverAdminRoutes } from "./cut-over-routes";
import { importAdminRoutes } from "./import-routes";
import { nhostLinkRoutes } from "./nhost-links";
import { orgImportRoutes } from "./org-import-routes";

/** Moving in from Nhost (contract move-in): the import's admin API, and Nhost's old links at the host's root. */
export const moveInFeature = {
  name: "move-in",
  tables,
  routes: (config: Config) => ({
    root: nhostLinkRoutes(config.urls.authPrefix),
    admin: new Hono<AppEnv>()
      .route("/", importAdminRoutes)
      .route("/", cutOverAdminRoutes)
      .route("/", orgImportRoutes),
  }),
};
