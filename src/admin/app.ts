import { Hono } from "hono";
import type { AppEnv } from "../http/app-env";
import { mirrorAdminRoutes } from "../mirror";
import { cutOverAdminRoutes, importAdminRoutes } from "../move-in";
import { oauth2ClientAdminRoutes } from "../oauth2";
import { orgAdminRoutes } from "../orgs";
import { scimTokenAdminRoutes } from "../scim";
import { ssoAdminRoutes } from "../sso";
import { webhookAdminRoutes } from "../webhooks";
import { auditAdminRoutes } from "./audit-routes";
import { brandAdminRoutes } from "./brand-routes";
import { consoleRoutes } from "./console/console-routes";
import { deadLetterAdminRoutes } from "./dead-letter-routes";
import { requireAdminSecret, requireConfiguredSecret } from "./guard";
import { keyAdminRoutes } from "./key-routes";
import { userAdminRoutes } from "./user-routes";

/**
 * The admin API (contract §10): users and their sessions, signing keys, OAuth2 clients, the audit log, webhooks and
 * the event stream's dead letters (move-in §5), imports.
 */
const adminApi = new Hono<AppEnv>()
  .use(requireAdminSecret)
  .route("/", userAdminRoutes)
  .route("/", keyAdminRoutes)
  .route("/", brandAdminRoutes)
  .route("/", oauth2ClientAdminRoutes)
  .route("/", auditAdminRoutes)
  .route("/", webhookAdminRoutes)
  .route("/", deadLetterAdminRoutes)
  .route("/", importAdminRoutes)
  .route("/", cutOverAdminRoutes)
  .route("/", mirrorAdminRoutes)
  .route("/", orgAdminRoutes)
  .route("/", ssoAdminRoutes)
  .route("/", scimTokenAdminRoutes);

/**
 * Mounted at `{AUTH_API_PREFIX}/admin`: the console's pages first (`/admin/console`, signed in with the admin secret
 * through a cookie, src/admin/console/session.ts), then the API (the secret in a header on every request). Without
 * `AUTH_ADMIN_SECRET` both answer 404.
 */
export const adminApp = new Hono<AppEnv>()
  .use("/console/*", requireConfiguredSecret)
  .use("/console", requireConfiguredSecret)
  .route("/console", consoleRoutes)
  .route("/", adminApi);
