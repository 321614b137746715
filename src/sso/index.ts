import { Hono } from "hono";
import type { AppEnv } from "../http/app-env";
import { ssoOrgRoutes } from "./org-routes";
import { ssoSignInRoutes } from "./sign-in-routes";

/**
 * Enterprise sign-in (contract organizations.md §2): connections (OIDC here, SAML in ./saml/), verified domains,
 * `POST /sso/start` and the IdPs' ways back, just-in-time members, enforced SSO's settings and its check at every
 * sign-in (./sign-in-check.ts, declared in ./feature.ts for auth's sign-in pipeline). docs/sso.md.
 */
export { ssoAdminRoutes } from "./admin-routes";
export {
  connectionSchema,
  createConnection,
  deleteConnection,
  getConnection,
  listConnections,
  newConnectionSchema,
  oidcCallbackUrl,
  type SetupLinkOrigin,
  toWireConnection,
  updateConnection,
  type WireConnection,
} from "./connections";
export {
  addDomain,
  deleteDomain,
  getDomain,
  listDomains,
  normalDomain,
  TXT_PREFIX,
  toWireDomain,
  verifyDomain,
} from "./domains";
export { setEnforceSso } from "./enforcement";
// Setup links (src/setup-links/): the connections a link made, and their test round trip.
export { connectionsOfLink, serveDomainThroughLink } from "./link-connections";
// Custom OpenID providers (src/providers/custom-endpoints.ts) are discovered and their ID tokens checked as here.
export { verifySignature as verifyIdTokenSignature } from "./oidc";
export { discover as discoverIssuer } from "./oidc-discovery";
export { ssoUrlForSignInPage } from "./page-start";
export { SSO_REQUEST_LIFETIME_MS } from "./requests";
// The import of Supabase's SAML providers (src/move-in/org-import.ts) tells which attribute mappings it can honour.
export { acsUrl, EMAIL_ATTRIBUTES, samlSettingsFromMetadata, spEntityId } from "./saml";
// The Supabase face's signInWithSSO (src/faces/supabase/) starts the same sign-in with its own way back.
export {
  connectionForEmail,
  findSsoConnection,
  type SsoCodeReturn,
  startConnectionTest,
  startSsoSignIn,
} from "./start";
export { claimReadyNotice } from "./test-round-trip";

/** The user-facing routes, mounted under the auth API. */
export const ssoRoutes = new Hono<AppEnv>().route("/", ssoOrgRoutes).route("/", ssoSignInRoutes);
