import type { Config } from "../config";
import { pageRoutes } from "./routes";

/**
 * The service's own pages at the IdP (contract §13): sign-in, sign-up, reset, MFA, the account choice, consent, the
 * device page, re-authentication, invitations, RP-initiated logout, and a first-party app's hosted pages. They keep
 * no table of their own: the browser session and the page shell are src/browser/'s, and an authorization is finished
 * through oauth2's interaction contract (src/oauth2/interaction.ts), as an external login UI finishes it.
 */
export const pagesFeature = {
  name: "pages",
  routes: (config: Config) => ({ auth: pageRoutes(config.oauth2.loginUrl) }),
};
