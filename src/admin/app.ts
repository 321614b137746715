import { Hono } from "hono";
import type { AppEnv } from "../http/app-env";
import { auditAdminRoutes } from "./audit-routes";
import { brandAdminRoutes } from "./brand-routes";
import { buildAdminRoutes } from "./build-routes";
import { deadLetterAdminRoutes } from "./dead-letter-routes";
import { keyAdminRoutes } from "./key-routes";
import { passkeyAdminRoutes } from "./passkey-routes";
import { rekeyAdminRoutes } from "./rekey-routes";
import { shardAdminRoutes } from "./shard-routes";
import { userAdminRoutes } from "./user-routes";

/**
 * The admin feature's own part of the admin API (contract §10): users and their sessions, signing keys, the brand,
 * the audit log and the event stream's dead letters (move-in §5). The other features bring theirs (OAuth2 clients,
 * webhooks, imports, the mirror, organizations, SSO, SCIM tokens); src/runtime/app.ts mounts them all behind the
 * admin secret.
 */
export const adminApi = new Hono<AppEnv>()
  .route("/", userAdminRoutes)
  .route("/", passkeyAdminRoutes)
  .route("/", keyAdminRoutes)
  .route("/", brandAdminRoutes)
  .route("/", auditAdminRoutes)
  .route("/", deadLetterAdminRoutes)
  // Moving slots between shards (docs/scaling.md, "Growing the shard list").
  .route("/", shardAdminRoutes)
  // The directory's old layout moved to its slots' shards (docs/scaling.md, "A deployment that ran several shards before").
  .route("/", rekeyAdminRoutes)
  // The directory of a one-shard deployment built from its rows (docs/scaling.md, "Growing from one shard").
  .route("/", buildAdminRoutes);
