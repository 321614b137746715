// The OpenID Foundation's `oidcc-config-certification-test-plan` (Config OP): its one module,
// oidcc-discovery-endpoint-verification, run against a deployment whose issuer is https (the module requires https
// for the discovery URL and every endpoint; the suite's other files use the local http issuer). Threats: a discovery
// document that names another issuer than the one it was fetched from (a client talking to one server while trusting
// another's keys, OIDC Discovery §4.3 and §7.2), metadata that promises what the server does not do (response modes,
// request objects, algorithms), and a key set a client cannot use or that leaks private key material.
import { importJWK, type JWK } from "jose";
import { describe, expect, it } from "vitest";
import { provider } from "../support";
import { discoveryOf, serverKeys } from "./support";

const HTTPS_ISSUER = "https://auth.example.com/auth/v1";
// A production deployment: an https issuer (the development mailbox is refused there), registration open.
const svc = provider({
  AUTH_SERVER_URL: HTTPS_ISSUER,
  AUTH_DEV_MAILBOX: "false",
  AUTH_OAUTH2_PROVIDER_REGISTRATION: "open",
});

/**
 * Every metadata name the server may publish, from the IANA "OAuth Authorization Server Metadata" registry (RFC 8414,
 * OIDC Discovery and the extensions this server implements). Anything else is flagged
 * (CheckForUnexpectedParametersInServerMetadata): usually a typo, which a client would read as "not supported".
 */
const REGISTERED_METADATA = new Set([
  "issuer",
  "authorization_endpoint",
  "token_endpoint",
  "userinfo_endpoint",
  "jwks_uri",
  "registration_endpoint",
  "scopes_supported",
  "response_types_supported",
  "response_modes_supported",
  "grant_types_supported",
  "acr_values_supported",
  "subject_types_supported",
  "id_token_signing_alg_values_supported",
  "userinfo_signing_alg_values_supported",
  "request_object_signing_alg_values_supported",
  "token_endpoint_auth_methods_supported",
  "token_endpoint_auth_signing_alg_values_supported",
  "display_values_supported",
  "claim_types_supported",
  "claims_supported",
  "service_documentation",
  "claims_locales_supported",
  "ui_locales_supported",
  "claims_parameter_supported",
  "request_parameter_supported",
  "request_uri_parameter_supported",
  "require_request_uri_registration",
  "op_policy_uri",
  "op_tos_uri",
  "revocation_endpoint",
  "revocation_endpoint_auth_methods_supported",
  "revocation_endpoint_auth_signing_alg_values_supported",
  "introspection_endpoint",
  "introspection_endpoint_auth_methods_supported",
  "introspection_endpoint_auth_signing_alg_values_supported",
  "code_challenge_methods_supported",
  "device_authorization_endpoint",
  "end_session_endpoint",
  "frontchannel_logout_supported",
  "frontchannel_logout_session_supported",
  "backchannel_logout_supported",
  "backchannel_logout_session_supported",
  // OpenID CIBA Core §4.
  "backchannel_authentication_endpoint",
  "backchannel_token_delivery_modes_supported",
  "backchannel_user_code_parameter_supported",
  "pushed_authorization_request_endpoint",
  "require_pushed_authorization_requests",
  "require_signed_request_object",
  "dpop_signing_alg_values_supported",
  "authorization_response_iss_parameter_supported",
  "authorization_details_types_supported",
  "prompt_values_supported",
  "client_id_metadata_document_supported",
  "protected_resources",
]);

/** OIDC Core §5.4: the claims each standard scope releases, as far as this service keeps them (src/oauth2/claims.ts). */
const SCOPE_CLAIMS: Record<string, string[]> = {
  profile: ["name", "picture", "locale"],
  email: ["email", "email_verified"],
  phone: ["phone_number", "phone_number_verified"],
};

/** RFC 6749 §3.3: scope-token = 1*NQCHAR (CheckDiscEndpointScopesSupportedSyntax). */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

const isHttpsUrl = (value: unknown) => {
  if (typeof value !== "string") return false;
  try {
    return new URL(value).protocol === "https:";
  } catch {
    return false;
  }
};

/** Members of a JWK that only a private or symmetric key has (EnsureJwksHasNoPrivateOrSymmetricKeyMaterial). */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

// Each module is one or two whole flows through the page (two clients for the refresh modules): more than the
// default five seconds on a loaded machine.
describe("oidcc-config-certification-test-plan", { timeout: 30_000 }, () => {
  // The discovery document as OIDCCDiscoveryEndpointVerification checks it (static-client variant): 200 JSON; a
  // response type of OIDC's; the discovery URL https and ending in /.well-known/openid-configuration; `issuer` the URL
  // it was fetched from without that suffix, https, no query or fragment; the metadata well-typed and every name a
  // registered one; subject_types_supported with public or pairwise; RS256 among the ID token algorithms; the
  // authorization, token, userinfo and registration endpoints, the jwks_uri and every other *_endpoint https; the key
  // set usable; claims_supported, grant_types_supported and scopes_supported well-formed, openid among the scopes;
  // code_challenge_methods_supported an array with S256 or plain. Beyond the module: the metadata agrees with itself
  // (scopes and claims, response types and grants, client authentication methods and their algorithms) and with what
  // the server does (a response mode it has, no request objects), the same document under every well-known name.
  it("oidcc-discovery-endpoint-verification", async () => {
    const discoveryUrl = `${HTTPS_ISSUER}/.well-known/openid-configuration`;
    const response = await svc.request("GET", discoveryUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const doc = (await response.json()) as Record<string, unknown>;

    // Where it came from (CheckDiscEndpointDiscoveryUrl, CheckDiscEndpointIssuer, …IssuerIsValidUrl).
    expect(new URL(discoveryUrl).protocol).toBe("https:");
    expect(doc.issuer).toBe(discoveryUrl.slice(0, -"/.well-known/openid-configuration".length));
    const issuer = new URL(String(doc.issuer));
    expect([issuer.protocol, issuer.search, issuer.hash]).toEqual(["https:", "", ""]);

    // Registered names, well typed (ValidateServerMetadataAgainstSchema, CheckForUnexpectedParametersInServerMetadata).
    expect(Object.keys(doc).filter((name) => !REGISTERED_METADATA.has(name))).toEqual([]);
    for (const [name, value] of Object.entries(doc)) {
      if (name.endsWith("_supported") && Array.isArray(value)) {
        expect(
          value.every((item) => typeof item === "string"),
          name,
        ).toBe(true);
      } else if (name.endsWith("_supported") || name.startsWith("require_")) {
        expect(typeof value, name).toBe("boolean");
      } else if (name.endsWith("_endpoint") || name.endsWith("_uri") || name === "issuer") {
        // CheckDiscEndpointAllEndpointsAreHttps, CheckJwksUri, CheckDiscEndpointRegistrationEndpoint.
        expect(isHttpsUrl(value), `${name}: ${value}`).toBe(true);
      }
    }

    // What OIDC Discovery §3 requires, and what the module holds it to.
    for (const name of ["authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri"]) {
      expect(isHttpsUrl(doc[name]), name).toBe(true);
    }
    expect(doc.registration_endpoint).toBe(`${HTTPS_ISSUER}/oauth2/register`);
    const responseTypes = doc.response_types_supported as string[];
    expect(responseTypes).toContain("code");
    expect(doc.subject_types_supported).toEqual(expect.arrayContaining(["public"]));
    expect(doc.id_token_signing_alg_values_supported).toContain("RS256");
    expect(doc.id_token_signing_alg_values_supported).not.toContain("none");
    const scopes = doc.scopes_supported as string[];
    expect(scopes).toContain("openid");
    expect(scopes.every((scope) => SCOPE_TOKEN.test(scope))).toBe(true);
    const grants = doc.grant_types_supported as string[];
    expect(grants.length).toBeGreaterThan(0);
    const claims = doc.claims_supported as string[];
    expect(claims.length).toBeGreaterThan(0);
    const pkce = doc.code_challenge_methods_supported as string[];
    expect(pkce).toContain("S256");
    // RFC 9700 §2.1.1: plain is refused, so it is not offered.
    expect(pkce).not.toContain("plain");

    // Consistent with itself: each scope's claims are listed; the code response type goes with its grant, and no
    // implicit one is offered without the implicit grant; a JWT client authentication names its algorithms (RFC 8414
    // §2), asymmetric ones only.
    expect(claims).toEqual(expect.arrayContaining(["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce"]));
    for (const scope of scopes)
      expect(claims, scope).toEqual(expect.arrayContaining(SCOPE_CLAIMS[scope] ?? []));
    expect(grants).toContain("authorization_code");
    expect(grants.includes("implicit")).toBe(responseTypes.some((type) => /token/.test(type)));
    const authMethods = doc.token_endpoint_auth_methods_supported as string[];
    expect(authMethods).toContain("client_secret_basic");
    if (authMethods.some((method) => method.endsWith("_jwt"))) {
      const algorithms = doc.token_endpoint_auth_signing_alg_values_supported as string[] | undefined;
      expect(algorithms?.length, "token_endpoint_auth_signing_alg_values_supported").toBeGreaterThan(0);
      expect(algorithms!.filter((alg) => alg === "none" || alg.startsWith("HS"))).toEqual([]);
    }
    if (doc.acr_values_supported !== undefined) expect(claims).toContain("acr");

    // Consistent with what the server does (OIDC Discovery §3 defaults): only the query response mode (omitting the
    // list would promise fragment too), no request objects by value or by reference, no claims parameter.
    expect(doc.response_modes_supported).toEqual(["query"]);
    expect(doc.request_parameter_supported).toBe(false);
    expect(doc.request_uri_parameter_supported).toBe(false);
    expect(doc.claims_parameter_supported ?? false).toBe(false);

    // The same document under RFC 8414's name, and at the host's root with the issuer's path inserted (RFC 8414 §3.1).
    const rfc8414 = await svc.request("GET", `${HTTPS_ISSUER}/.well-known/oauth-authorization-server`);
    expect(await rfc8414.json()).toEqual(doc);
    const inserted = await svc.request(
      "GET",
      `https://auth.example.com/.well-known/openid-configuration${issuer.pathname}`,
    );
    expect(await inserted.json()).toEqual(doc);

    // The key set (FetchServerKeys, ValidateJwksSequence, CheckForKeyIdInServerJWKs, CheckDistinctKeyIdValue…): public
    // keys only, each usable for its algorithm, RSA of 2048 bits or more, distinct key ids, one RSA key for RS256.
    const { keys } = await serverKeys(svc, HTTPS_ISSUER);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys as (JWK & Record<string, unknown>)[]) {
      expect(
        PRIVATE_MEMBERS.filter((member) => member in key),
        key.kid,
      ).toEqual([]);
      expect(["RSA", "EC", "OKP"]).toContain(key.kty);
      expect(key.kid).toEqual(expect.any(String));
      if (key.use !== undefined) expect(key.use).toBe("sig");
      expect(key.alg, key.kid).toEqual(expect.any(String));
      await importJWK(key, key.alg);
      if (key.kty === "RSA")
        expect(atob(key.n!.replace(/-/g, "+").replace(/_/g, "/")).length * 8).toBeGreaterThanOrEqual(2048);
    }
    expect(new Set(keys.map((key) => key.kid)).size).toBe(keys.length);
    expect(keys.some((key) => key.kty === "RSA" && (key.alg ?? "RS256") === "RS256")).toBe(true);
    expect(await discoveryOf(svc, HTTPS_ISSUER)).toEqual(doc);
  });
});
