import { fedcmRoutes, wellKnownRoutes } from "./routes";

/**
 * FedCM's identity provider (W3C Federated Credential Management, docs/fedcm.md): a relying party's page asks the
 * browser's own prompt to sign a person in with this service; the assertion is an OAuth2 code for the client whose
 * `fedcmOrigins` list the page's origin. No table or setting of its own: the clients are the authorization server's,
 * the session the hosted pages'.
 */
export const fedcmFeature = {
  name: "fedcm",
  routes: () => ({ root: wellKnownRoutes, auth: fedcmRoutes }),
};
