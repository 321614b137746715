import { ACR_VALUES } from "../browser/acr";
import type { Config } from "../config";
import { getKeySet } from "../signing-keys/keys";
import { CLAIMS_SUPPORTED } from "./claims";
import { AUTH_METHODS, CLIENT_ASSERTION_ALGORITHMS, GRANT_TYPES, SUPPORTED_SCOPES } from "./clients";
import { DPOP_ALGS } from "./dpop";

/**
 * The discovery document of contract §3.5 and §3.6 (OpenID Connect Discovery 1.0, RFC 8414), absolute under the
 * issuer; the same at the issuer and at the host's root under the path-inserted names (RFC 8414 §3.1).
 */
export async function discoveryDocument(config: Config) {
  const issuer = config.urls.server;
  // RS256 unless the key set has no RSA key at all (src/signing-keys/keys.ts, `idTokenSigner`).
  const { idTokenSigner } = await getKeySet(config);
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth2/authorize`,
    token_endpoint: `${issuer}/oauth2/token`,
    userinfo_endpoint: `${issuer}/oauth2/userinfo`,
    jwks_uri: `${issuer}/oauth2/jwks`,
    revocation_endpoint: `${issuer}/oauth2/revoke`,
    introspection_endpoint: `${issuer}/oauth2/introspect`,
    ...(config.oauth2.registration === "off" ? {} : { registration_endpoint: `${issuer}/oauth2/register` }),
    device_authorization_endpoint: `${issuer}/oauth2/device_authorization`,
    // RFC 9126 §5: PAR, required of every client when the deployment says so (else per client).
    pushed_authorization_request_endpoint: `${issuer}/oauth2/par`,
    require_pushed_authorization_requests: config.oauth2.requirePar,
    response_types_supported: ["code"],
    // OIDC Discovery §3's default is query and fragment; only query is answered (authorize.ts refuses the others).
    response_modes_supported: ["query"],
    grant_types_supported: [...GRANT_TYPES],
    scopes_supported: [...SUPPORTED_SCOPES],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [idTokenSigner.alg],
    token_endpoint_auth_methods_supported: [...AUTH_METHODS],
    // private_key_jwt's algorithms (RFC 8414 §2; clients/client-assertion.ts): asymmetric only.
    token_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGORITHMS],
    code_challenge_methods_supported: ["S256"],
    claims_supported: CLAIMS_SUPPORTED,
    // Contract §12, step-up: the levels a request may ask for (`acr_values`), weakest first, and the prompts it may use.
    acr_values_supported: [...ACR_VALUES],
    prompt_values_supported: ["none", "login", "consent", "select_account"],
    request_parameter_supported: false,
    // OIDC Discovery's default is true: request objects by reference are not fetched, only PAR's request_uri is used.
    request_uri_parameter_supported: false,
    authorization_response_iss_parameter_supported: true,
    // RFC 9449 §5.1: DPoP proofs are accepted at the token endpoint (every grant) and userinfo.
    dpop_signing_alg_values_supported: DPOP_ALGS,
    // RP-Initiated Logout 1.0 §2.1: with the built-in page, whose session it ends (src/pages/logout-routes.ts).
    ...(config.oauth2.loginUrl ? {} : { end_session_endpoint: `${issuer}/oauth2/logout` }),
    // Back-Channel Logout 1.0 §2.1: logout tokens, always with `sid` (logout/backchannel-fan-out.ts).
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    // OpenID CIBA Core §4: poll and ping (src/oauth2/ciba/), for clients an admin allowed; no signed requests, no
    // user codes.
    backchannel_authentication_endpoint: `${issuer}/oauth2/bc-authorize`,
    backchannel_token_delivery_modes_supported: ["poll", "ping"],
    backchannel_user_code_parameter_supported: false,
    // draft-ietf-oauth-client-id-metadata-document: an https client_id naming the client's own JSON document.
    client_id_metadata_document_supported: config.oauth2.clientIdDocuments,
  };
}
