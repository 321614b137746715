import { Hono } from "hono";
import type { AppEnv } from "../app-env";
import { oauth2ClientAdminRoutes } from "../oauth2/admin-routes";
import { auditAdminRoutes } from "./audit-routes";
import { requireAdminSecret } from "./guard";
import { keyAdminRoutes } from "./key-routes";
import { userAdminRoutes } from "./user-routes";

/**
 * The admin API (contract §10), mounted at `{AUTH_API_PREFIX}/admin`: users and their sessions, signing keys, OAuth2
 * clients, the audit log.
 */
export const adminApp = new Hono<AppEnv>()
  .use(requireAdminSecret)
  .route("/", userAdminRoutes)
  .route("/", keyAdminRoutes)
  .route("/", oauth2ClientAdminRoutes)
  .route("/", auditAdminRoutes);
