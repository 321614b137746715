import type { Config } from "../config";
import { getKeySet } from "../lib/keys";
import { CLAIMS_SUPPORTED } from "./claims";
import { AUTH_METHODS, GRANT_TYPES, SUPPORTED_SCOPES } from "./clients";

/**
 * The discovery document of contract §3.5 and §3.6 (OpenID Connect Discovery 1.0, RFC 8414), absolute under the
 * issuer; the same at the issuer and at the host's root under the path-inserted names (RFC 8414 §3.1).
 */
export async function discoveryDocument(config: Config) {
  const issuer = config.AUTH_SERVER_URL;
  // RS256 unless the key set has no RSA key at all (src/lib/keys.ts, `idTokenSigner`).
  const { idTokenSigner } = await getKeySet(config);
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth2/authorize`,
    token_endpoint: `${issuer}/oauth2/token`,
    userinfo_endpoint: `${issuer}/oauth2/userinfo`,
    jwks_uri: `${issuer}/oauth2/jwks`,
    revocation_endpoint: `${issuer}/oauth2/revoke`,
    introspection_endpoint: `${issuer}/oauth2/introspect`,
    ...(config.AUTH_OAUTH2_PROVIDER_REGISTRATION === "off"
      ? {}
      : { registration_endpoint: `${issuer}/oauth2/register` }),
    device_authorization_endpoint: `${issuer}/oauth2/device_authorization`,
    response_types_supported: ["code"],
    grant_types_supported: [...GRANT_TYPES],
    scopes_supported: [...SUPPORTED_SCOPES],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [idTokenSigner.alg],
    token_endpoint_auth_methods_supported: [...AUTH_METHODS],
    code_challenge_methods_supported: ["S256"],
    claims_supported: CLAIMS_SUPPORTED,
    request_parameter_supported: false,
    authorization_response_iss_parameter_supported: true,
    // draft-ietf-oauth-client-id-metadata-document: an https client_id naming the client's own JSON document.
    client_id_metadata_document_supported: config.oauth2ClientIdDocuments,
  };
}
