import { Hono } from "hono";
import { asPages } from "../browser/page-faults";
import type { AppEnv } from "../http/app-env";
import { DEVICE_PAGE_PATH, LOGIN_PAGE_PATH } from "../lib/redirect";
import { CIBA_PAGE_PATH } from "../oauth2";
import { INVITATION_PAGE_PATH } from "../orgs";
import { cibaPageRoutes } from "./ciba-routes";
import { devicePageRoutes } from "./device-routes";
import { hostedPageRoutes } from "./hosted-routes";
import { interactionRoutes } from "./interaction-routes";
import { invitationPageRoutes } from "./invitation-routes";
import { logoutRoutes } from "./logout-routes";
import { passkeyUpgradeRoutes } from "./passkey-upgrade";

/**
 * The built-in pages, mounted on the auth API right after the authorization server's endpoints (src/oauth2/, whose
 * on switch covers the pages under `/oauth2/` but the login page): the device page always, the invitation page and
 * logout unless an external login UI is set. The login and consent page is mounted always: it is also the hosted
 * pages of a first-party app (`/signin`, `/signup`, `/reset`, contract §13), which are served whatever the switch and
 * the login UI; it serves the authorization server's requests only when they are on and it is their UI
 * (oauth2 `describeInteraction`).
 */
export function pageRoutes(loginUrl: string | undefined) {
  const pages = new Hono<AppEnv>()
    .route(DEVICE_PAGE_PATH, devicePageRoutes(loginUrl))
    // OpenID CIBA's approval link: on to the login and consent page, or the external login UI, as the device's.
    .route(CIBA_PAGE_PATH, cibaPageRoutes(loginUrl))
    .route(LOGIN_PAGE_PATH, interactionRoutes)
    .route("/", hostedPageRoutes);
  // The invitation page ends on the login page, so it is there only with it (docs/organizations.md, "The link").
  if (!loginUrl) pages.route(INVITATION_PAGE_PATH, invitationPageRoutes);
  // A fault on these is a page (src/browser/page-faults.ts); not on the passkey upgrade's JSON, which the page's
  // script reads. RP-initiated logout is marked where it is declared (its document lists the fault page).
  const routes = new Hono<AppEnv>().route("/", asPages(pages)).route(LOGIN_PAGE_PATH, passkeyUpgradeRoutes);
  // RP-initiated logout ends the page's session, so it is there only with it (an external login UI keeps its own).
  if (!loginUrl) routes.route("/", logoutRoutes);
  return routes;
}
