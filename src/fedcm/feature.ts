import { loginPopupRoutes } from "./login-popup";
import { fedcmRoutes, wellKnownRoutes } from "./routes";
import { fedcmSettings } from "./settings";

/**
 * FedCM's identity provider (W3C Federated Credential Management, docs/fedcm.md): a relying party's page asks the
 * browser's own prompt to sign a person in with this service; the assertion is an OAuth2 code for the client whose
 * `fedcmOrigins` list the page's origin; no table of its own (the clients are the authorization server's, the session
 * the hosted pages'); its `login_url` is a page that closes the browser's sign-in pop-up (login-popup.ts). As a relying party: Google's One Tap on the hosted sign-in page (one-tap.ts, its settings).
 */
export const fedcmFeature = {
  name: "fedcm",
  settings: fedcmSettings,
  routes: () => ({ root: wellKnownRoutes, auth: fedcmRoutes, pages: loginPopupRoutes }),
};
