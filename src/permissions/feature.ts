import type { Config } from "../config";
import * as tables from "../db/tables/permissions";
import type { Deps } from "../http/deps";
import { permissionAdminRoutes } from "./admin-routes";
import { authzenRoutes } from "./authzen-routes";
import { relationshipCleanup } from "./cleanup";

/**
 * Permissions (contract platform.md §2): Cedar policies over the service's own users, organizations and stored
 * relationships, asked through the AuthZEN 1.0 API at the host's root, managed through the admin API.
 */
export const permissionsFeature = {
  name: "permissions",
  tables,
  routes: (config: Config) => ({ root: authzenRoutes(config), admin: permissionAdminRoutes }),
  eventConsumer: ({ db }: Deps) => relationshipCleanup(db),
};
