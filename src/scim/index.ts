/**
 * SCIM 2.0 provisioning (contract organizations.md §3, RFC 7643/7644): what the rest of the service uses. The auth
 * app mounts `scimApp` (the `/scim/v2` endpoints and the org owner's token routes), the admin API
 * `scimTokenAdminRoutes`. Everything else in src/scim/ is internal to it.
 */
import { Hono } from "hono";
import type { AppEnv } from "../http/app-env";
import { scimRoutes } from "./routes";
import { scimTokenAdminRoutes, scimTokenRoutes } from "./token-routes";

export const scimApp = new Hono<AppEnv>().route("/", scimTokenRoutes).route("/", scimRoutes as never);
export { createScimToken, deleteScimToken, listScimTokens } from "./tokens";
export { scimTokenAdminRoutes };
