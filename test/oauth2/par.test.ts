// Pushed authorization requests (RFC 9126, contract §12): openid-client 6 pushes its request and sends the browser
// with only client_id and request_uri. Threats: a captured request_uri replayed (RFC 9126 §7.3), used after it
// expired, used by another client, or guessed; parameters added to the front-channel URL to override what was pushed
// (another redirect URI, wider scopes, a new state); a client or deployment that requires PAR skipped by a plain
// request; a body that is not a form read as empty, or a parameter sent twice smuggling a second value past a check;
// a client secret kept at rest with the pushed request; a pushed request that points at another request_uri.
import { env } from "cloudflare:test";
import * as oidc from "openid-client";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/lib/crypto";
import type { WireClient } from "../../src/oauth2/clients";
import { getConfig } from "../../src/runtime/config";
import { runHousekeeping } from "../../src/runtime/cron";
import { decodeJwt, signUp, type TestService } from "../helpers";
import { browserThrough, discover, flowChecks } from "./relying-party-in-pool";
import {
  authorize,
  basic,
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
const OTHER_REDIRECT_URI = "https://rp.example.com/elsewhere";

/** A pushed request of `client` (HTTP Basic for a confidential one, client_id for a public one). */
async function push(
  client: WireClient,
  values: Record<string, string | undefined> = {},
  service: TestService = svc,
): Promise<Response> {
  return postForm(
    service,
    "/oauth2/par",
    {
      response_type: "code",
      redirect_uri: REDIRECT_URI,
      scope: "openid profile",
      state: "pushed-state",
      nonce: "pushed-nonce",
      code_challenge: await s256(VERIFIER),
      code_challenge_method: "S256",
      ...(client.clientSecret ? {} : { client_id: client.clientId }),
      ...values,
    },
    client.clientSecret ? basic(client) : {},
  );
}

async function pushedUri(
  client: WireClient,
  values: Record<string, string | undefined> = {},
): Promise<string> {
  const response = await push(client, values);
  expect(response.status, await response.clone().text()).toBe(201);
  return ((await response.json()) as { request_uri: string }).request_uri;
}

/** The browser at the authorization endpoint with a request_uri (and whatever else a test puts on the URL). */
function authorizeWith(
  client: WireClient,
  requestUri: string,
  extra: Record<string, string> = {},
  service = svc,
) {
  const query = new URLSearchParams({ client_id: client.clientId, request_uri: requestUri, ...extra });
  return service.request("GET", `/oauth2/authorize?${query}`);
}

const storedRow = async (requestUri: string) =>
  env.DB.prepare(
    "SELECT client_id, params, expires_at FROM oauth2_pushed_requests WHERE request_uri_hash = ?",
  )
    .bind(await sha256Hex(requestUri))
    .first<{ client_id: string; params: string; expires_at: number }>();

describe("pushed authorization requests with openid-client", () => {
  it("openid-client pushes the request; the browser carries only client_id and request_uri; the flow completes", async () => {
    const client = await newClient(svc);
    const config = await discover(svc, client.clientId, oidc.ClientSecretBasic(client.clientSecret!));
    expect(config.serverMetadata()).toMatchObject({
      pushed_authorization_request_endpoint: `${ISSUER}/oauth2/par`,
      require_pushed_authorization_requests: false,
      authorization_response_iss_parameter_supported: true,
      request_uri_parameter_supported: false,
    });
    const { params, checks } = await flowChecks();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT_URI,
      scope: "openid email offline_access",
      ...params,
    });
    expect([...url.searchParams.keys()].sort()).toEqual(["client_id", "request_uri"]);
    expect(url.searchParams.get("request_uri")).toMatch(
      /^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/,
    );
    const session = await signUp(svc);
    const callback = await browserThrough(svc, url, session);
    // RFC 9207: openid-client checks `iss` in the response, since discovery says it is always there.
    expect(callback.searchParams.get("iss")).toBe(ISSUER);
    const tokens = await oidc.authorizationCodeGrant(config, callback, checks);
    expect(tokens.refresh_token).toBeTruthy();
    expect(tokens.claims()).toMatchObject({
      sub: session.user.id,
      aud: client.clientId,
      nonce: checks.expectedNonce,
    });
    expect(decodeJwt(tokens.access_token).payload.scope).toBe("openid email offline_access");
  });

  it("answers 201 with a urn of 256 random bits for 60 s, no-store; only its hash is kept, never the client secret", async () => {
    const client = await newClient(svc, { tokenEndpointAuthMethod: "client_secret_post" });
    // client_secret_post: the secret comes in the pushed form itself.
    const response = await push(
      { ...client, clientSecret: undefined },
      { client_secret: client.clientSecret },
    );
    expect(response.status).toBe(201);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const body = (await response.json()) as { request_uri: string; expires_in: number };
    expect(body.expires_in).toBe(60);
    const row = await storedRow(body.request_uri);
    expect(row?.client_id).toBe(client.clientId);
    expect(row!.expires_at - Date.now()).toBeLessThanOrEqual(60_000);
    expect(row!.params).not.toContain(client.clientSecret!);
    expect(new URLSearchParams(row!.params).get("client_secret")).toBeNull();
    expect(JSON.stringify(row)).not.toContain(body.request_uri);
  });

  it("a public client pushes with its client_id and PKCE", async () => {
    const client = await newClient(svc, { tokenEndpointAuthMethod: "none" });
    const requestUri = await pushedUri(client);
    const requestId = await requestIdOf(await authorizeWith(client, requestUri));
    const described = await svc.get(`/oauth2/login?request_id=${requestId}`);
    expect(await described.json()).toMatchObject({ clientId: client.clientId, redirectUri: REDIRECT_URI });
  });
});

describe("request_uri at the authorization endpoint", () => {
  it("threat: a captured request_uri replayed — the second use is refused as JSON, never redirected", async () => {
    const client = await newClient(svc);
    const requestUri = await pushedUri(client);
    expect((await authorizeWith(client, requestUri)).status).toBe(302);
    const again = await authorizeWith(client, requestUri);
    expect(again.headers.get("location")).toBeNull();
    await oauth2Error(again, 400, "invalid_request_uri");
  });

  it("threat: an expired request_uri is refused, and the daily housekeeping deletes it", async () => {
    const client = await newClient(svc);
    const requestUri = await pushedUri(client);
    await env.DB.prepare("UPDATE oauth2_pushed_requests SET expires_at = ? WHERE request_uri_hash = ?")
      .bind(Date.now() - 1, await sha256Hex(requestUri))
      .run();
    await oauth2Error(await authorizeWith(client, requestUri), 400, "invalid_request_uri");
    expect(await storedRow(requestUri)).not.toBeNull();
    await runHousekeeping(svc.env, getConfig(svc.env));
    expect(await storedRow(requestUri)).toBeNull();
  });

  it("threat: another client presenting a request_uri gets nothing, and does not burn it for its owner", async () => {
    const owner = await newClient(svc);
    const thief = await newClient(svc);
    const requestUri = await pushedUri(owner);
    await oauth2Error(await authorizeWith(thief, requestUri), 400, "invalid_request_uri");
    expect((await authorizeWith(owner, requestUri)).status).toBe(302);
  });

  it("threat: a guessed or malformed request_uri is refused; a URL to fetch (SSRF) is never fetched", async () => {
    const client = await newClient(svc);
    const guessed = `urn:ietf:params:oauth:request_uri:${"A".repeat(43)}`;
    for (const requestUri of [guessed, "urn:ietf:params:oauth:request_uri:short"]) {
      await oauth2Error(await authorizeWith(client, requestUri), 400, "invalid_request_uri");
    }
    await oauth2Error(
      await svc.request("GET", `/oauth2/authorize?${new URLSearchParams({ request_uri: guessed })}`),
      400,
      "invalid_request",
    );
    // A request object by reference (OIDC Core §6.2) is not supported: request_uri_not_supported to the client.
    const path = `/requests/${crypto.randomUUID()}.jwt`;
    const byReference = location(
      await authorize(svc, client, { request_uri: `https://client-docs.fake${path}` }),
    );
    expect(byReference.searchParams.get("error")).toBe("request_uri_not_supported");
    const fetched = await env.OUTBOUND!.fetch(`https://client-docs.fake/__fetches?path=${path}`);
    expect(await fetched.json()).toBe(0);
  });

  it("threat: parameters on the authorize URL cannot override the pushed ones (RFC 9126 §4)", async () => {
    const client = await newClient(svc, { redirectUris: [REDIRECT_URI, OTHER_REDIRECT_URI] });
    const requestUri = await pushedUri(client, { scope: "openid", state: "pushed-state" });
    const response = await authorizeWith(client, requestUri, {
      redirect_uri: OTHER_REDIRECT_URI,
      scope: "openid graphql offline_access",
      state: "attacker-state",
      response_type: "token",
      code_challenge: await s256("attacker-verifier-attacker-verifier-0123"),
    });
    const requestId = await requestIdOf(response);
    const described = (await (await svc.get(`/oauth2/login?request_id=${requestId}`)).json()) as {
      redirectUri: string;
      scopes: string[];
    };
    expect(described).toMatchObject({ redirectUri: REDIRECT_URI, scopes: ["openid"] });
    const session = await signUp(svc);
    const completed = await svc.post("/oauth2/login", { requestId }, session.accessToken);
    const back = new URL(((await completed.json()) as { redirectUri: string }).redirectUri);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    expect(back.searchParams.get("state")).toBe("pushed-state");
    // The pushed PKCE challenge holds: the pushed verifier redeems the code.
    const tokens = await postForm(
      svc,
      "/oauth2/token",
      {
        grant_type: "authorization_code",
        code: back.searchParams.get("code")!,
        redirect_uri: REDIRECT_URI,
        code_verifier: VERIFIER,
      },
      basic(client),
    );
    expect(tokens.status).toBe(200);
  });
});

describe("requiring PAR", () => {
  it("threat: a client that requires PAR skipped by a plain request — invalid_request to its redirect URI, with iss", async () => {
    const client = await newClient(svc, { requirePushedAuthorizationRequests: true });
    const plain = location(await authorize(svc, client, { state: "st-plain" }));
    expect(`${plain.origin}${plain.pathname}`).toBe(REDIRECT_URI);
    expect(Object.fromEntries(plain.searchParams)).toMatchObject({
      error: "invalid_request",
      state: "st-plain",
      iss: ISSUER,
    });
    // Pushed, the same client's request goes on to the login step.
    expect(
      location(await authorizeWith(client, await pushedUri(client))).searchParams.get("request_id"),
    ).toBeTruthy();
  });

  it("threat: with AUTH_OAUTH2_PROVIDER_REQUIRE_PAR every plain request is refused; an unregistered URI still never redirected", async () => {
    const strict = provider({ AUTH_OAUTH2_PROVIDER_REQUIRE_PAR: "true" });
    const discovery = (await (await strict.get("/.well-known/openid-configuration")).json()) as Record<
      string,
      unknown
    >;
    expect(discovery.require_pushed_authorization_requests).toBe(true);
    const client = await newClient(strict);
    const plain = location(await authorize(strict, client));
    expect(plain.searchParams.get("error")).toBe("invalid_request");
    expect(plain.searchParams.get("iss")).toBe(ISSUER);
    const unregistered = await authorize(strict, client, { redirect_uri: "https://evil.example/cb" });
    expect(unregistered.headers.get("location")).toBeNull();
    await oauth2Error(unregistered, 400, "invalid_request");
    const response = await push(client, {}, strict);
    expect(response.status).toBe(201);
    const { request_uri } = (await response.json()) as { request_uri: string };
    expect((await authorizeWith(client, request_uri, {}, strict)).status).toBe(302);
  });
});

describe("the pushed authorization request endpoint refuses, as JSON (RFC 9126 §2.3)", () => {
  it("threat: a JSON body, which a lax parser would read as an empty request", async () => {
    const client = await newClient(svc);
    const response = await svc.request("POST", "/oauth2/par", {
      json: { response_type: "code", redirect_uri: REDIRECT_URI, client_id: client.clientId },
      headers: basic(client),
    });
    await oauth2Error(response, 400, "invalid_request");
  });

  it("threat: a parameter sent twice, to get a second value past a check", async () => {
    const client = await newClient(svc, { redirectUris: [REDIRECT_URI, OTHER_REDIRECT_URI] });
    const body = `${new URLSearchParams({
      response_type: "code",
      redirect_uri: REDIRECT_URI,
      code_challenge: await s256(VERIFIER),
      code_challenge_method: "S256",
    })}&redirect_uri=${encodeURIComponent(OTHER_REDIRECT_URI)}`;
    const response = await svc.request("POST", "/oauth2/par", {
      body,
      headers: { "content-type": "application/x-www-form-urlencoded", ...basic(client) },
    });
    await oauth2Error(response, 400, "invalid_request");
  });

  it("threat: an unauthenticated or wrongly authenticated push, or one naming another client", async () => {
    const client = await newClient(svc);
    const other = await newClient(svc);
    await oauth2Error(await push({ ...client, clientSecret: "wrong" }), 401, "invalid_client");
    await oauth2Error(await push({ ...client, clientSecret: undefined }), 401, "invalid_client");
    await oauth2Error(await push(client, { client_id: other.clientId }), 400, "invalid_request");
  });

  it("refuses what the authorization endpoint would, as JSON and not as a redirect", async () => {
    const client = await newClient(svc, { scopes: ["openid", "profile"] });
    const cases: [Record<string, string | undefined>, string][] = [
      // RFC 9126 §2.4 would let a confidential client use an unregistered redirect URI: not here.
      [{ redirect_uri: "https://evil.example/cb" }, "invalid_request"],
      [{ redirect_uri: undefined }, "invalid_request"],
      // RFC 9126 §2.1: a pushed request never points at another one.
      [{ request_uri: `urn:ietf:params:oauth:request_uri:${"B".repeat(43)}` }, "invalid_request"],
      [{ request: "eyJhbGciOiJub25lIn0.e30." }, "request_not_supported"],
      [{ code_challenge: undefined, code_challenge_method: undefined }, "invalid_request"],
      [{ code_challenge_method: "plain" }, "invalid_request"],
      [{ scope: "openid graphql" }, "invalid_scope"],
      [{ response_type: "token" }, "unsupported_response_type"],
    ];
    for (const [values, error] of cases) {
      const response = await push(client, values);
      expect(response.headers.get("location"), JSON.stringify(values)).toBeNull();
      await oauth2Error(response, 400, error);
    }
  });

  it("is advertised in discovery with private_key_jwt's algorithms", async () => {
    const discovery = (await (await svc.get("/.well-known/openid-configuration")).json()) as Record<
      string,
      unknown
    >;
    expect(discovery).toMatchObject({
      pushed_authorization_request_endpoint: `${ISSUER}/oauth2/par`,
      require_pushed_authorization_requests: false,
      authorization_response_iss_parameter_supported: true,
      token_endpoint_auth_signing_alg_values_supported: expect.arrayContaining([
        "PS256",
        "ES256",
        "EdDSA",
        "RS256",
      ]),
    });
    expect(discovery.token_endpoint_auth_signing_alg_values_supported).not.toContain("HS256");
  });
});
