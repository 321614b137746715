import { Hono } from "hono";
import type { AppEnv } from "../http/app-env";
import { LOGIN_PAGE_PATH } from "../lib/redirect";
import { INVITATION_PAGE_PATH } from "../orgs";
import { authorizeRoutes } from "./authorize-routes";
import { registrationRoutes } from "./clients";
import { DEVICE_PAGE_PATH } from "./device";
import { discoveryRoutes } from "./discovery-routes";
import { endpointErrors } from "./endpoint-errors";
import { introspectionRoutes } from "./introspection-routes";
import {
  devicePageRoutes,
  hostedPageRoutes,
  interactionRoutes,
  invitationPageRoutes,
  logoutRoutes,
} from "./page";
import { parRoutes } from "./par-routes";
import { requireEnabled } from "./route-support";
import { tokenRoutes } from "./token-routes";
import { userinfoRoutes } from "./userinfo-routes";

export { rootMetadataRoutes } from "./discovery-routes";

/** The endpoints a client calls directly, with their own error handler (endpoint-errors.ts says why). */
function clientEndpoints() {
  const endpoints = new Hono<AppEnv>().onError(endpointErrors);
  return endpoints
    .route("/", tokenRoutes)
    .route("/", parRoutes)
    .route("/", introspectionRoutes)
    .route("/", userinfoRoutes)
    .route("/", registrationRoutes);
}

/**
 * The authorization server (contract §3.5, §3.6), mounted on the auth API: every endpoint group behind the on
 * switch, then the built-in pages (the device page always, the invitation page and logout unless an external login UI
 * is set). The login and consent page is mounted always, outside the switch: it is also the hosted pages of a
 * first-party app (`/signin`, `/signup`, `/reset`, contract §13), which are served whatever the switch and the login
 * UI; it serves the authorization server's requests only when they are on and it is their UI (`loadRequest`).
 */
export function oauth2Routes(loginUrl: string | undefined) {
  const routes = new Hono<AppEnv>()
    .use("/.well-known/openid-configuration", requireEnabled)
    .use("/.well-known/oauth-authorization-server", requireEnabled)
    .use("/oauth2/*", requireEnabled)
    .route("/", discoveryRoutes)
    .route("/", authorizeRoutes)
    .route("/", clientEndpoints())
    .route(DEVICE_PAGE_PATH, devicePageRoutes(loginUrl))
    .route(LOGIN_PAGE_PATH, interactionRoutes)
    .route("/", hostedPageRoutes);
  // The invitation page ends on the login page, so it is there only with it (docs/organizations.md, "The link");
  // so does RP-initiated logout, which ends the page's session (an external login UI keeps its own).
  if (!loginUrl) routes.route(INVITATION_PAGE_PATH, invitationPageRoutes).route("/", logoutRoutes);
  return routes;
}
