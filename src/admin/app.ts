import { Hono } from "hono";
import type { AppEnv } from "../app-env";
import { oauth2ClientAdminRoutes } from "../oauth2/admin-routes";
import { requireAdminSecret } from "./guard";

/**
 * The admin API (contract §10), mounted at `{AUTH_API_PREFIX}/admin`. Today: OAuth2 clients. Users, sessions,
 * signing keys and the audit log are the operations issue's.
 */
export const adminApp = new Hono<AppEnv>().use(requireAdminSecret).route("/", oauth2ClientAdminRoutes);
