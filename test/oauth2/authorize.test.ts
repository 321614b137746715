// The authorize endpoint, discovery and the JSON login step (contract §3.5). Threats: an open redirector through an
// unregistered redirect URI (RFC 9700 §4.11), PKCE downgrade to `plain` or none for a public client (§2.1.1),
// parameter smuggling through repeated parameters, and completing one pending request twice.
import { describe, expect, it } from "vitest";
import { expectError, SERVER, service, signUp } from "../helpers";
import {
  authorize,
  codeFor,
  ISSUER,
  location,
  newClient,
  oauth2Error,
  postForm,
  provider,
  REDIRECT_URI,
  requestIdOf,
  s256,
  VERIFIER,
} from "./support";

const svc = provider();

describe("discovery and keys", () => {
  it("publishes exactly the fields of §3.5 and §3.6 under both well-known names, with absolute endpoints", async () => {
    const response = await svc.get("/.well-known/openid-configuration");
    expect(response.status).toBe(200);
    const document = await response.json();
    expect(document).toEqual({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/oauth2/authorize`,
      token_endpoint: `${ISSUER}/oauth2/token`,
      userinfo_endpoint: `${ISSUER}/oauth2/userinfo`,
      jwks_uri: `${ISSUER}/oauth2/jwks`,
      revocation_endpoint: `${ISSUER}/oauth2/revoke`,
      introspection_endpoint: `${ISSUER}/oauth2/introspect`,
      device_authorization_endpoint: `${ISSUER}/oauth2/device_authorization`,
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: [
        "authorization_code",
        "refresh_token",
        "urn:ietf:params:oauth:grant-type:device_code",
        "client_credentials",
        "urn:ietf:params:oauth:grant-type:token-exchange",
        "urn:ietf:params:oauth:grant-type:jwt-bearer",
        "urn:openid:params:grant-type:ciba",
      ],
      scopes_supported: ["openid", "profile", "email", "phone", "offline_access", "graphql", "authzen"],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: ["RS256"],
      token_endpoint_auth_methods_supported: [
        "client_secret_basic",
        "client_secret_post",
        "private_key_jwt",
        "none",
      ],
      // private_key_jwt's algorithms, asymmetric only (private-key-jwt.test.ts).
      token_endpoint_auth_signing_alg_values_supported: ["PS256", "ES256", "EdDSA", "Ed25519", "RS256"],
      code_challenge_methods_supported: ["S256"],
      claims_supported: expect.arrayContaining([
        ...["sub", "email", "email_verified", "auth_time", "nonce"],
        ...["acr", "amr", "sid"],
      ]),
      // Step-up (contract §12): the levels, weakest first, and every prompt (step-up.test.ts).
      acr_values_supported: ["urn:edge-auth:acr:pwd", "urn:edge-auth:acr:mfa", "urn:edge-auth:acr:phr"],
      prompt_values_supported: ["none", "login", "consent", "select_account"],
      request_parameter_supported: false,
      // PAR (RFC 9126, par.test.ts): the only request_uri there is; required per client unless the deployment says so.
      request_uri_parameter_supported: false,
      dpop_signing_alg_values_supported: ["ES256", "ES384", "PS256", "EdDSA", "Ed25519"],
      pushed_authorization_request_endpoint: `${ISSUER}/oauth2/par`,
      require_pushed_authorization_requests: false,
      authorization_response_iss_parameter_supported: true,
      // Registration is off here, and documents follow it by default (metadata-documents.test.ts has the switch).
      client_id_metadata_document_supported: false,
      // Logout (contract §12): RP-initiated with the built-in page, back-channel with `sid` (logout.test.ts).
      end_session_endpoint: `${ISSUER}/oauth2/logout`,
      backchannel_logout_supported: true,
      backchannel_logout_session_supported: true,
      // OpenID CIBA Core §4 (ciba.test.ts).
      backchannel_authentication_endpoint: `${ISSUER}/oauth2/bc-authorize`,
      backchannel_token_delivery_modes_supported: ["poll", "ping"],
      backchannel_user_code_parameter_supported: false,
      // RFC 9396 §10.1: the union of the clients' types, whatever other files made (authorization-details/flows.test.ts).
      authorization_details_types_supported: expect.any(Array),
    });
    const rfc8414 = await svc.get("/.well-known/oauth-authorization-server");
    expect(await rfc8414.json()).toEqual(document);
  });

  // RFC 8414 §3.1: for the issuer …/auth/v1 the first place a client looks is the host's root with the path inserted
  // (the MCP SDK's first choice); the document there is the issuer's own, readable from any origin.
  it("serves the same document at the host's root under the path-inserted names", async () => {
    const issuers = await (await svc.get("/.well-known/openid-configuration")).json();
    for (const name of ["oauth-authorization-server", "openid-configuration"]) {
      const response = await svc.request("GET", `${SERVER}/.well-known/${name}/auth/v1`, {
        headers: { origin: "https://mcp-host.example" },
      });
      expect(response.status, name).toBe(200);
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
      expect(await response.json()).toEqual(issuers);
    }
    const off = service({ AUTH_OAUTH2_PROVIDER_ENABLED: "false" });
    await expectError(
      await off.request("GET", `${SERVER}/.well-known/oauth-authorization-server/auth/v1`),
      409,
      "disabled-endpoint",
    );
    await expectError(
      await svc.request("GET", `${SERVER}/.well-known/oauth-authorization-server/other`),
      404,
      "route-not-found",
    );
  });

  it("serves the same key set at /oauth2/jwks as at /.well-known/jwks.json", async () => {
    const [oauth2, jwks] = await Promise.all([svc.get("/oauth2/jwks"), svc.get("/.well-known/jwks.json")]);
    expect(oauth2.status).toBe(200);
    const body = (await oauth2.json()) as { keys: { kid: string }[] };
    expect(body.keys.length).toBeGreaterThan(0);
    expect(body).toEqual(await jwks.json());
  });

  it("answers every path as a disabled feature when the provider is off", async () => {
    const off = service({ AUTH_OAUTH2_PROVIDER_ENABLED: "false" });
    for (const path of [
      "/.well-known/openid-configuration",
      "/oauth2/jwks",
      "/oauth2/authorize",
      "/oauth2/userinfo",
    ]) {
      await expectError(await off.get(path), 409, "disabled-endpoint");
    }
    await expectError(
      await off.request("POST", "/oauth2/token", { body: "grant_type=x" }),
      409,
      "disabled-endpoint",
    );
  });
});

describe("authorize: errors that never redirect", () => {
  it("answers 401 invalid_client for an unknown client, in JSON", async () => {
    const response = await svc.get(
      `/oauth2/authorize?client_id=oc_nobody&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&response_type=code`,
    );
    expect(response.headers.get("location")).toBeNull();
    await oauth2Error(response, 401, "invalid_client");
  });

  it("never redirects to a URI the client did not register, not even one that differs by a slash or a query", async () => {
    const client = await newClient(svc);
    for (const redirect_uri of [
      "https://evil.example.com/callback",
      `${REDIRECT_URI}/`,
      `${REDIRECT_URI}?next=/x`,
      "https://RP.example.com/callback",
      undefined,
    ]) {
      const response = await authorize(svc, client, { redirect_uri });
      expect(response.headers.get("location")).toBeNull();
      await oauth2Error(response, 400, "invalid_request");
    }
  });
});

describe("authorize: errors sent back to the client", () => {
  async function errorOf(response: Response) {
    const url = location(response);
    expect(`${url.origin}${url.pathname}`).toBe(REDIRECT_URI);
    expect(url.searchParams.get("iss")).toBe(ISSUER);
    expect(url.searchParams.get("error_description")).toBeTruthy();
    return { error: url.searchParams.get("error"), state: url.searchParams.get("state") };
  }

  it("refuses other response types, scopes outside the client's, request objects and repeated parameters", async () => {
    const client = await newClient(svc, { scopes: ["openid", "profile", "email"] });
    expect(await errorOf(await authorize(svc, client, { response_type: "token" }))).toEqual({
      error: "unsupported_response_type",
      state: "st-1",
    });
    expect(await errorOf(await authorize(svc, client, { scope: "openid graphql" }))).toEqual({
      error: "invalid_scope",
      state: "st-1",
    });
    expect(await errorOf(await authorize(svc, client, { scope: "openid admin" }))).toMatchObject({
      error: "invalid_scope",
    });
    // OIDC Core §3.1.2.6: request objects are not supported, by value or by reference (only PAR's request_uri).
    expect(await errorOf(await authorize(svc, client, { request: "eyJ..." }))).toMatchObject({
      error: "request_not_supported",
    });
    expect(await errorOf(await authorize(svc, client, { request_uri: "urn:x" }))).toMatchObject({
      error: "request_uri_not_supported",
    });
    // A PAR request_uri that names nothing is a JSON error: nothing about the request can be trusted (par.test.ts).
    const unknownPushed = await authorize(svc, client, {
      request_uri: `urn:ietf:params:oauth:request_uri:${"A".repeat(43)}`,
    });
    expect(unknownPushed.headers.get("location")).toBeNull();
    await oauth2Error(unknownPushed, 400, "invalid_request_uri");
    expect(await errorOf(await authorize(svc, client, { prompt: "none login" }))).toMatchObject({
      error: "invalid_request",
    });
    expect(await errorOf(await authorize(svc, client, { max_age: "-1" }))).toMatchObject({
      error: "invalid_request",
    });
    const repeated = await svc.get(
      `/oauth2/authorize?client_id=${client.clientId}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&response_type=code&scope=openid&scope=email`,
    );
    await oauth2Error(repeated, 400, "invalid_request");
  });

  // RFC 6749 §4.1.2.1: once the client and its redirect URI are known, every other failure goes back to the client.
  // Threat: an over-long parameter answered as a JSON 400 leaves the person stranded on this server, and the app
  // never hears why its sign-in stopped (an 8200-character id_token_hint did, from a client that did all else right).
  it("sends an over-long parameter back to the client as invalid_request, whichever it is", async () => {
    const client = await newClient(svc, { tokenEndpointAuthMethod: "none" });
    const pkce = { code_challenge: await s256(VERIFIER), code_challenge_method: "S256" };
    const bounds: [string, number][] = [
      ["scope", 1000],
      ["nonce", 512],
      ["login_hint", 254],
      ["ui_locales", 200],
      ["organization", 100],
      ["acr_values", 1000],
      ["id_token_hint", 8192],
    ];
    for (const [name, bound] of bounds) {
      const response = await authorize(svc, client, { ...pkce, [name]: "x".repeat(bound + 8) });
      expect(response.status, name).toBe(302);
      expect(await errorOf(response), name).toEqual({ error: "invalid_request", state: "st-1" });
    }
    // A `state` too long to echo is dropped, and the error still goes back.
    const longState = await authorize(svc, client, { ...pkce, state: "s".repeat(2049) });
    expect(await errorOf(longState)).toEqual({ error: "invalid_request", state: null });
  });

  it("refuses plain PKCE, a challenge without S256, and a public client without PKCE", async () => {
    const confidential = await newClient(svc);
    const challenge = await s256(VERIFIER);
    expect(
      await errorOf(
        await authorize(svc, confidential, { code_challenge: VERIFIER, code_challenge_method: "plain" }),
      ),
    ).toMatchObject({ error: "invalid_request" });
    expect(await errorOf(await authorize(svc, confidential, { code_challenge: challenge }))).toMatchObject({
      error: "invalid_request",
    });
    expect(
      await errorOf(
        await authorize(svc, confidential, { code_challenge: "short", code_challenge_method: "S256" }),
      ),
    ).toMatchObject({ error: "invalid_request" });
    const publicClient = await newClient(svc, { tokenEndpointAuthMethod: "none" });
    expect(await errorOf(await authorize(svc, publicClient))).toMatchObject({ error: "invalid_request" });
    const ok = await authorize(svc, publicClient, {
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    expect(location(ok).pathname).toBe("/auth/v1/oauth2/interaction");
  });
});

describe("authorize and the JSON login step", () => {
  it("keeps the request for the login UI (GET and POST form) and completes it once for the signed-in user", async () => {
    const client = await newClient(svc);
    const viaPost = await postForm(svc, "/oauth2/authorize", {
      client_id: client.clientId,
      redirect_uri: REDIRECT_URI,
      response_type: "code",
      scope: "openid email",
      state: "post-state",
    });
    const requestId = await requestIdOf(viaPost);
    const described = await svc.get(`/oauth2/login?request_id=${requestId}`);
    expect(await described.json()).toEqual({
      requestId,
      clientId: client.clientId,
      clientName: "Relying Party",
      scopes: ["openid", "email"],
      redirectUri: REDIRECT_URI,
    });
    await expectError(await svc.post("/oauth2/login", { requestId }), 401, "unauthorized");
    const session = await signUp(svc);
    const [first, second] = await Promise.all([
      svc.post("/oauth2/login", { requestId }, session.accessToken),
      svc.post("/oauth2/login", { requestId }, session.accessToken),
    ]);
    expect([first.status, second.status].sort()).toEqual([200, 400]);
    const winner = first.status === 200 ? first : second;
    const redirect = new URL(((await winner.json()) as { redirectUri: string }).redirectUri);
    expect(redirect.searchParams.get("code")).toMatch(/^oac_/);
    expect(redirect.searchParams.get("state")).toBe("post-state");
    expect(redirect.searchParams.get("iss")).toBe(ISSUER);
    await expectError(
      await svc.post("/oauth2/login", { requestId }, session.accessToken),
      400,
      "invalid-request",
    );
    await expectError(await svc.get("/oauth2/login?request_id=unknown"), 400, "invalid-request");
  });

  // An external login UI must know when the client asked for a stronger or fresher sign-in (contract §12), or it
  // would complete with whatever session the person has and the client would get a weaker sign-in than it asked for.
  it("tells the login UI the sign-in the request needs: acr_values, max_age, prompt", async () => {
    const client = await newClient(svc);
    const requestId = await requestIdOf(
      await authorize(svc, client, {
        acr_values: "urn:edge-auth:acr:mfa urn:unknown",
        max_age: "300",
        prompt: "login consent",
      }),
    );
    const described = (await (await svc.get(`/oauth2/login?request_id=${requestId}`)).json()) as Record<
      string,
      unknown
    >;
    expect(described).toMatchObject({
      acrValues: ["urn:edge-auth:acr:mfa"],
      maxAge: 300,
      prompt: ["login", "consent"],
    });
  });

  it("refuses to complete a request for an anonymous user", async () => {
    const anonymous = provider({ AUTH_ANONYMOUS_USERS_ENABLED: "true" });
    const client = await newClient(anonymous);
    const session = (await (await anonymous.post("/signin/anonymous", {})).json()) as {
      session: { accessToken: string };
    };
    const requestId = await requestIdOf(await authorize(anonymous, client));
    await expectError(
      await anonymous.post("/oauth2/login", { requestId }, session.session.accessToken),
      403,
      "forbidden-anonymous",
    );
  });

  it("asks for a fresh sign-in when prompt=login or max_age says the session's sign-in is too old", async () => {
    const client = await newClient(svc);
    const session = await signUp(svc);
    await new Promise((resolve) => setTimeout(resolve, 5));
    for (const params of [{ prompt: "login" }, { max_age: "0" }]) {
      const requestId = await requestIdOf(await authorize(svc, client, params));
      await new Promise((resolve) => setTimeout(resolve, 5));
      await expectError(
        await svc.post("/oauth2/login", { requestId }, session.accessToken),
        401,
        "unauthorized",
      );
    }
    const { code } = await codeFor(svc, client, session, { max_age: "3600" });
    expect(code).toMatch(/^oac_/);
  });

  it("sends prompt=none back with login_required when an external login UI is configured", async () => {
    const external = provider({ AUTH_OAUTH2_PROVIDER_LOGIN_URL: "https://login.example.com/oauth" });
    const client = await newClient(external);
    const ui = location(await authorize(external, client));
    expect(`${ui.origin}${ui.pathname}`).toBe("https://login.example.com/oauth");
    const none = location(await authorize(external, client, { prompt: "none" }));
    expect(none.searchParams.get("error")).toBe("login_required");
    // The built-in page serves none of the external UI's requests (it is there for the hosted pages of the app only).
    const builtIn = await external.get(`/oauth2/interaction?request_id=${ui.searchParams.get("request_id")}`);
    expect(builtIn.status).toBe(400);
    expect(await builtIn.text()).toContain("unknown or has expired");
  });
});
