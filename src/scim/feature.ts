import * as tables from "../db/tables/scim";
import { scimApp } from "./index";
import { scimTokenAdminRoutes } from "./token-routes";

/** SCIM 2.0 provisioning of an organization's users and groups (contract organizations.md §3). */
export const scimFeature = {
  name: "scim",
  tables,
  routes: () => ({ auth: scimApp, admin: scimTokenAdminRoutes }),
};
