/**
 * The SAML 2.0 service provider of enterprise connections (contract organizations.md §2; docs/saml.md): what the sso
 * core uses to store a connection's settings, to start a sign-in, and the routes it mounts.
 */
export { newSamlRequestId, samlAuthnRequestUrl } from "./authn-request";
export { EMAIL_ATTRIBUTES } from "./identity";
export {
  acsUrl,
  type SamlSettings,
  samlSettingsFromMetadata,
  samlSettingsSchema,
  spEntityId,
  spMetadataXml,
} from "./metadata";
export { samlRoutes } from "./routes";
