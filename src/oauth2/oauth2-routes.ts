import { Hono } from "hono";
import type { AppEnv } from "../http/app-env";
import { authorizeRoutes } from "./authorize-routes";
import { backchannelRoutes } from "./ciba";
import { registrationRoutes } from "./clients";
import { discoveryRoutes } from "./discovery-routes";
import { endpointErrors } from "./endpoint-errors";
import { introspectionRoutes } from "./introspection-routes";
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
    .route("/", backchannelRoutes)
    .route("/", introspectionRoutes)
    .route("/", userinfoRoutes)
    .route("/", registrationRoutes);
}

/**
 * The authorization server (contract §3.5, §3.6), mounted on the auth API: every endpoint group behind the on
 * switch, which also covers the built-in pages under `/oauth2/` (src/pages/, mounted after these) but the login and
 * consent page (route-support.ts `requireEnabled`). The pages finish a request through interaction.ts, as an external
 * login UI does.
 */
export function oauth2Routes() {
  return new Hono<AppEnv>()
    .use("/.well-known/openid-configuration", requireEnabled)
    .use("/.well-known/oauth-authorization-server", requireEnabled)
    .use("/oauth2/*", requireEnabled)
    .route("/", discoveryRoutes)
    .route("/", authorizeRoutes)
    .route("/", clientEndpoints());
}
