// Dynamic client registration (RFC 7591) and its management protocol (RFC 7592), contract §3.6. Threats: a client
// that registers a redirect URI it could abuse (plain http to another host, javascript:/data:, a fragment, another
// app's scheme); a flood of registrations from one address; an unused self-registered client kept forever; someone
// other than the registrant reading, changing or deleting a registration; a deleted client still getting tokens.
// Issue 28: anyone minting machine tokens for every resource by registering a client_credentials client (open
// registration handed it out); a registration access token that outlives the PUT that replaced the metadata (a leaked
// token kept working forever); a client name that reorders or hides what the consent screen says (bidi overrides).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { WireClient } from "../../../src/oauth2/clients";
import { ADDRESS_LIMITER_BINDINGS } from "../../../src/rate-limits/buckets";
import { getConfig } from "../../../src/runtime/config";
import { runHousekeeping } from "../../../src/runtime/cron";
import { signUp, type TestService } from "../../helpers";
import { allInShards } from "../../support/shards";
import {
  basic,
  codeFor,
  exchange,
  ISSUER,
  location,
  newClient,
  oauth2Error,
  postForm,
  provider,
  REDIRECT_URI,
  s256,
  VERIFIER,
} from "../support";

const open = provider({ AUTH_OAUTH2_PROVIDER_REGISTRATION: "open" });
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

interface Registered {
  client_id: string;
  client_secret?: string;
  client_secret_expires_at?: number;
  client_id_issued_at: number;
  registration_access_token: string;
  registration_client_uri: string;
  client_name: string;
  redirect_uris: string[];
  application_type: string;
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: string;
  scope: string;
  [field: string]: unknown;
}

function register(svc: TestService, body: unknown, headers: Record<string, string> = {}) {
  return svc.request("POST", "/oauth2/register", {
    body: JSON.stringify(body),
    headers: { "content-type": "application/json", ...headers },
  });
}

async function registered(svc: TestService, body: Record<string, unknown>): Promise<Registered> {
  const response = await register(svc, { client_name: "Agent", redirect_uris: [REDIRECT_URI], ...body });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as Registered;
}

/** The registered client as the token endpoint and the authorize step see it (support.ts speaks WireClient). */
const asWire = (client: Registered) =>
  ({ clientId: client.client_id, clientSecret: client.client_secret }) as WireClient;

const manage = (
  client: Registered,
  method: string,
  token = client.registration_access_token,
  body?: unknown,
) =>
  open.request(method, client.registration_client_uri, {
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function adminView(svc: TestService, clientId: string) {
  const response = await svc.request("GET", `/admin/oauth2/clients/${encodeURIComponent(clientId)}`, {
    headers: ADMIN,
  });
  return { status: response.status, client: (await response.json()) as WireClient };
}

describe("registration modes (AUTH_OAUTH2_PROVIDER_REGISTRATION)", () => {
  it("is off by default: 403 access_denied, and discovery names no registration endpoint", async () => {
    const off = provider();
    await oauth2Error(await register(off, { redirect_uris: [REDIRECT_URI] }), 403, "access_denied");
    const discovery = (await (await off.get("/.well-known/openid-configuration")).json()) as Record<
      string,
      unknown
    >;
    expect(discovery.registration_endpoint).toBeUndefined();
    const onDiscovery = (await (await open.get("/.well-known/openid-configuration")).json()) as Record<
      string,
      unknown
    >;
    expect(onDiscovery.registration_endpoint).toBe(`${ISSUER}/oauth2/register`);
  });

  it("open: anyone registers; the answer is RFC 7591's, uncached, with the secret and token shown once", async () => {
    const response = await register(open, {
      client_name: "Research agent",
      redirect_uris: [REDIRECT_URI],
      client_uri: "https://agent.example.com",
      logo_uri: "https://agent.example.com/logo.png",
      contacts: ["ops@agent.example.com"],
      software_id: "research-agent",
      software_version: "1.4.0",
      jwks_uri: "https://agent.example.com/jwks", // kept: the keys of a client that turns to private_key_jwt
      tos_uri: "https://agent.example.com/tos", // unknown to this server: ignored (RFC 7591 §2)
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const client = (await response.json()) as Registered;
    expect(client).toEqual({
      client_id: expect.stringMatching(/^oc_/),
      client_secret: expect.stringMatching(/^ocs_/),
      client_secret_expires_at: 0,
      client_id_issued_at: expect.any(Number),
      registration_access_token: expect.stringMatching(/^ocr_[A-Za-z0-9_-]{43}$/),
      registration_client_uri: `${ISSUER}/oauth2/register/${client.client_id}`,
      client_name: "Research agent",
      redirect_uris: [REDIRECT_URI],
      application_type: "web",
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
      scope: "openid profile email offline_access",
      client_uri: "https://agent.example.com",
      logo_uri: "https://agent.example.com/logo.png",
      contacts: ["ops@agent.example.com"],
      software_id: "research-agent",
      software_version: "1.4.0",
      jwks_uri: "https://agent.example.com/jwks",
      dpop_bound_access_tokens: false,
      require_pushed_authorization_requests: false,
    });
    expect(client).not.toHaveProperty("tos_uri");
    expect(Math.abs(client.client_id_issued_at - Date.now() / 1000)).toBeLessThan(60);
    // Stored hashed: neither the secret nor the registration token is in the row.
    const row = await env.DB.prepare("SELECT * FROM oauth2_clients WHERE client_id = ?")
      .bind(client.client_id)
      .first<Record<string, unknown>>();
    expect(JSON.stringify(row)).not.toContain(client.client_secret!);
    expect(JSON.stringify(row)).not.toContain(client.registration_access_token);
    const { client: seen } = await adminView(open, client.client_id);
    expect(seen).toMatchObject({
      registration: "open",
      registeredByUserId: null,
      clientName: "Research agent",
    });
  });

  it("open: the registered client completes the code flow and its secret authenticates it", async () => {
    const client = await registered(open, { grant_types: ["authorization_code", "refresh_token"] });
    const session = await signUp(open);
    const { code } = await codeFor(open, asWire(client), session, {
      scope: "openid offline_access",
      code_challenge: await s256(VERIFIER),
      code_challenge_method: "S256",
    });
    const tokens = await exchange(open, asWire(client), code, { code_verifier: VERIFIER });
    expect(tokens.status).toBe(200);
    expect(await tokens.json()).toMatchObject({ refresh_token: expect.stringMatching(/^ort_/) });
    // Its use is recorded (at most daily), which is what keeps it from expiring.
    const { client: seen } = await adminView(open, client.client_id);
    expect(seen.lastUsedAt).toEqual(expect.any(String));
  });

  it("a public client (token_endpoint_auth_method none) gets no secret", async () => {
    const client = await registered(open, { token_endpoint_auth_method: "none" });
    expect(client.client_secret).toBeUndefined();
    expect(client.client_secret_expires_at).toBeUndefined();
  });

  it("grants fewer scopes than asked when it must, and says which (RFC 7591 §2)", async () => {
    const client = await registered(open, { scope: "openid email admin:everything" });
    expect(client.scope).toBe("openid email");
  });

  it("authenticated: a signed-in user's bearer is required, and the client belongs to that user", async () => {
    const svc = provider({
      AUTH_OAUTH2_PROVIDER_REGISTRATION: "authenticated",
      AUTH_ANONYMOUS_USERS_ENABLED: "true",
    });
    const body = { client_name: "My CLI", redirect_uris: ["http://127.0.0.1/callback"] };
    await oauth2Error(await register(svc, body), 401, "invalid_token");
    await oauth2Error(
      await register(svc, body, { authorization: "Bearer not-a-token" }),
      401,
      "invalid_token",
    );
    const session = await signUp(svc);
    const response = await register(svc, body, { authorization: `Bearer ${session.accessToken}` });
    expect(response.status).toBe(201);
    const client = (await response.json()) as Registered;
    const { client: seen } = await adminView(svc, client.client_id);
    expect(seen).toMatchObject({ registration: "authenticated", registeredByUserId: session.user.id });
    // An anonymous user has no account to answer for a client.
    const anonymous = (await (await svc.post("/signin/anonymous", {})).json()) as {
      session: { accessToken: string };
    };
    await oauth2Error(
      await register(svc, body, { authorization: `Bearer ${anonymous.session.accessToken}` }),
      403,
      "access_denied",
    );
  });
});

describe("registration guardrails (RFC 7591 §3.2.2 errors)", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ["http to another host", { redirect_uris: ["http://agent.example.com/cb"] }, "invalid_redirect_uri"],
    [
      "loopback http for a client that says it is web",
      { application_type: "web", redirect_uris: ["http://127.0.0.1:8080/cb"] },
      "invalid_redirect_uri",
    ],
    ["a fragment", { redirect_uris: ["https://agent.example.com/cb#x"] }, "invalid_redirect_uri"],
    ["javascript:", { redirect_uris: ["javascript:alert(1)//"] }, "invalid_redirect_uri"],
    ["data:", { redirect_uris: ["data:text/html,hi"] }, "invalid_redirect_uri"],
    [
      "credentials in the URI",
      { redirect_uris: ["https://a:b@agent.example.com/cb"] },
      "invalid_redirect_uri",
    ],
    ["not a URI", { redirect_uris: ["/relative/cb"] }, "invalid_redirect_uri"],
    [
      "a private-use scheme that is not reverse-domain",
      { application_type: "native", redirect_uris: ["myapp:/cb"] },
      "invalid_redirect_uri",
    ],
    [
      "a private-use scheme for a web client",
      { application_type: "web", redirect_uris: ["com.example.app:/cb"] },
      "invalid_redirect_uri",
    ],
    ["no redirect URI for the code grant", { redirect_uris: [] }, "invalid_redirect_uri"],
    ["an unknown grant type", { grant_types: ["password"] }, "invalid_client_metadata"],
    ["implicit's response type", { response_types: ["token"] }, "invalid_client_metadata"],
    [
      "an unsupported auth method",
      { token_endpoint_auth_method: "private_key_jwt" },
      "invalid_client_metadata",
    ],
    [
      "client_credentials without a secret",
      { grant_types: ["client_credentials"], token_endpoint_auth_method: "none" },
      "invalid_client_metadata",
    ],
    [
      "client_credentials (machine clients are an admin's to create or allow)",
      { grant_types: ["client_credentials"], redirect_uris: [] },
      "invalid_client_metadata",
    ],
    [
      "client_credentials beside the code grant",
      { grant_types: ["authorization_code", "client_credentials"] },
      "invalid_client_metadata",
    ],
    [
      "a name with a right-to-left override",
      { client_name: "Acme \u202Egnp.exe" },
      "invalid_client_metadata",
    ],
    ["a name with a zero-width space", { client_name: "Goo\u200Bgle" }, "invalid_client_metadata"],
    ["a name with a line break", { client_name: "Acme\nAllow everything" }, "invalid_client_metadata"],
    ["a name with a bidi isolate", { client_name: "\u2067Acme\u2069" }, "invalid_client_metadata"],
    ["a name with a line separator", { client_name: "Acme\u2028Bank" }, "invalid_client_metadata"],
    ["a name with a byte-order mark", { client_name: "\uFEFFAcme" }, "invalid_client_metadata"],
    ["an unknown application type", { application_type: "desktop" }, "invalid_client_metadata"],
    ["a name too long", { client_name: "n".repeat(201) }, "invalid_client_metadata"],
    ["too many redirect URIs", { redirect_uris: Array(21).fill(REDIRECT_URI) }, "invalid_client_metadata"],
    ["a contact that is not an email", { contacts: ["call me"] }, "invalid_client_metadata"],
    [
      "an http logo on another host",
      { logo_uri: "http://agent.example.com/l.png" },
      "invalid_client_metadata",
    ],
    ["a redirect_uris that is not a list", { redirect_uris: REDIRECT_URI }, "invalid_client_metadata"],
  ];
  for (const [what, body, error] of cases) {
    it(`refuses ${what} with ${error}`, async () => {
      await oauth2Error(
        await register(open, { client_name: "Agent", redirect_uris: [REDIRECT_URI], ...body }),
        400,
        error,
      );
    });
  }

  it("refuses bodies that are not a JSON object of metadata", async () => {
    for (const [body, type] of [
      ["not json", "application/json"],
      ["[1,2]", "application/json"],
      ["null", "application/json"],
      ["redirect_uris=https://a.example", "application/x-www-form-urlencoded"],
    ]) {
      const response = await open.request("POST", "/oauth2/register", {
        body,
        headers: { "content-type": type! },
      });
      await oauth2Error(response, 400, "invalid_client_metadata");
    }
  });

  // A flood from one address registers nothing past the limit; another address is not affected.
  it("counts registrations per address in their own bucket", async () => {
    const noBindings = Object.fromEntries(
      Object.values(ADDRESS_LIMITER_BINDINGS).map((name) => [name, undefined]),
    );
    const limited = provider({
      AUTH_OAUTH2_PROVIDER_REGISTRATION: "open",
      AUTH_RATE_LIMIT_ENABLE: "true",
      AUTH_RATE_LIMIT_REGISTRATION_BURST: "3",
      ...noBindings,
    });
    const from = (ip: string) =>
      register(limited, { client_name: "Flood", redirect_uris: [REDIRECT_URI] }, { "cf-connecting-ip": ip });
    const ip = `198.51.100.${Math.floor(Math.random() * 250)}`;
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await from(ip)).status);
    expect(statuses).toEqual([201, 201, 201, 429, 429]);
    expect((await from(`203.0.113.${Math.floor(Math.random() * 250)}`)).status).toBe(201);
  });
});

describe("machine clients (client_credentials) are an admin's", () => {
  it("a signed-in user cannot register one either (authenticated mode)", async () => {
    const svc = provider({ AUTH_OAUTH2_PROVIDER_REGISTRATION: "authenticated" });
    const session = await signUp(svc);
    const body = await oauth2Error(
      await register(
        svc,
        { client_name: "My job", grant_types: ["client_credentials"], redirect_uris: [] },
        { authorization: `Bearer ${session.accessToken}` },
      ),
      400,
      "invalid_client_metadata",
    );
    expect(body.error_description).toContain("client_credentials");
  });

  it("an admin allows it per client; the client's own PUT may keep it but never add it back", async () => {
    const client = await registered(open, {});
    const machineToken = () =>
      postForm(open, "/oauth2/token", { grant_type: "client_credentials" }, basic(asWire(client)));
    await oauth2Error(await machineToken(), 400, "unauthorized_client");
    const allowed = await open.request("PUT", `/admin/oauth2/clients/${client.client_id}`, {
      headers: ADMIN,
      json: {
        clientName: "Agent",
        redirectUris: [REDIRECT_URI],
        grantTypes: ["authorization_code", "client_credentials"],
      },
    });
    expect(allowed.status).toBe(200);
    expect((await machineToken()).status).toBe(200);
    let token = client.registration_access_token;
    const put = async (grantTypes: string[]) => {
      const response = await manage(client, "PUT", token, {
        client_id: client.client_id,
        client_name: "Agent",
        redirect_uris: [REDIRECT_URI],
        grant_types: grantTypes,
      });
      if (response.status === 200)
        token = ((await response.clone().json()) as Registered).registration_access_token;
      return response;
    };
    expect((await put(["authorization_code", "client_credentials"])).status).toBe(200);
    expect((await machineToken()).status).toBe(200);
    expect((await put(["authorization_code"])).status).toBe(200);
    await oauth2Error(
      await put(["authorization_code", "client_credentials"]),
      400,
      "invalid_client_metadata",
    );
  });
});

describe("native clients: a loopback redirect URI matches on any port (RFC 8252 §7.3)", () => {
  const authorizeAt = (svc: TestService, clientId: string, redirectUri: string) =>
    svc.request(
      "GET",
      `/oauth2/authorize?${new URLSearchParams({
        client_id: clientId,
        redirect_uri: redirectUri,
        response_type: "code",
        scope: "openid",
        code_challenge: "x".repeat(43),
        code_challenge_method: "S256",
      })}`,
    );

  it("a native client is sent back to the port its app listens on; path and host must still match", async () => {
    const client = await registered(open, {
      application_type: "native",
      token_endpoint_auth_method: "none",
      redirect_uris: ["http://127.0.0.1/callback"],
    });
    expect(
      location(await authorizeAt(open, client.client_id, "http://127.0.0.1:53123/callback")).pathname,
    ).toMatch(/interaction$/);
    await oauth2Error(
      await authorizeAt(open, client.client_id, "http://127.0.0.1:53123/other"),
      400,
      "invalid_request",
    );
    await oauth2Error(
      await authorizeAt(open, client.client_id, "http://localhost:53123/callback"),
      400,
      "invalid_request",
    );
  });

  it("a client that names no type and registers only loopback URIs is native (MCP hosts and CLIs do this)", async () => {
    const client = await registered(open, {
      token_endpoint_auth_method: "none",
      redirect_uris: ["http://localhost:8080/oauth/callback"],
    });
    expect(client.application_type).toBe("native");
    expect(
      location(await authorizeAt(open, client.client_id, "http://localhost:39999/oauth/callback")).pathname,
    ).toMatch(/interaction$/);
  });

  it("a web client's loopback URI (an admin's, for development) matches exactly, on its own port only", async () => {
    const client = await newClient(open, { redirectUris: ["http://127.0.0.1:3000/callback"] });
    expect(client.applicationType).toBe("web");
    expect(
      location(await authorizeAt(open, client.clientId, "http://127.0.0.1:3000/callback")).pathname,
    ).toMatch(/interaction$/);
    await oauth2Error(
      await authorizeAt(open, client.clientId, "http://127.0.0.1:3001/callback"),
      400,
      "invalid_request",
    );
  });
});

describe("client configuration endpoint (RFC 7592)", () => {
  it("reads the registration with its token, and answers 401 to any other token", async () => {
    const client = await registered(open, {});
    const read = await manage(client, "GET");
    expect(read.status).toBe(200);
    const metadata = (await read.json()) as Registered;
    expect(metadata).toMatchObject({ client_id: client.client_id, client_name: "Agent" });
    // Neither the secret nor the token is ever shown again.
    expect(metadata.client_secret).toBeUndefined();
    expect(metadata.registration_access_token).toBeUndefined();
    const other = await registered(open, {});
    await oauth2Error(await manage(client, "GET", other.registration_access_token), 401, "invalid_token");
    await oauth2Error(await manage(client, "GET", "ocr_guess"), 401, "invalid_token");
    const unauthenticated = await open.request("GET", client.registration_client_uri);
    await oauth2Error(unauthenticated, 401, "invalid_token");
    // An unknown client answers the same as a wrong token: a probe learns nothing.
    await oauth2Error(
      await open.request("GET", `${ISSUER}/oauth2/register/oc_unknown`, {
        headers: { authorization: `Bearer ${client.registration_access_token}` },
      }),
      401,
      "invalid_token",
    );
  });

  it("replaces the metadata with PUT; the body's client_id must be the client's, and public stays public", async () => {
    const client = await registered(open, {});
    const replaced = await manage(client, "PUT", undefined, {
      client_id: client.client_id,
      client_name: "Agent v2",
      redirect_uris: ["https://agent.example.com/cb"],
    });
    expect(replaced.status).toBe(200);
    const answer = (await replaced.json()) as Registered;
    expect(answer).toMatchObject({
      client_name: "Agent v2",
      redirect_uris: ["https://agent.example.com/cb"],
    });
    const token = answer.registration_access_token;
    expect((await (await manage(client, "GET", token)).json()) as Registered).toMatchObject({
      client_name: "Agent v2",
    });
    await oauth2Error(
      await manage(client, "PUT", token, { client_id: "oc_other", redirect_uris: [REDIRECT_URI] }),
      400,
      "invalid_client_metadata",
    );
    await oauth2Error(
      await manage(client, "PUT", token, {
        client_id: client.client_id,
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: "none",
      }),
      400,
      "invalid_client_metadata",
    );
    await oauth2Error(
      await manage(client, "PUT", token, {
        client_id: client.client_id,
        redirect_uris: ["http://evil.example/"],
      }),
      400,
      "invalid_redirect_uri",
    );
  });

  // RFC 7592 §2.2 lets the server issue a new registration access token with the answer to PUT: a token that leaked
  // (a log, a shared config) stops working at the client's next update instead of never.
  it("PUT rotates the registration access token: the old one is refused at once, the new one works", async () => {
    const client = await registered(open, {});
    const replaced = await manage(client, "PUT", undefined, {
      client_id: client.client_id,
      client_name: "Agent v2",
      redirect_uris: [REDIRECT_URI],
    });
    expect(replaced.status).toBe(200);
    const { registration_access_token: rotated } = (await replaced.json()) as Registered;
    expect(rotated).toMatch(/^ocr_[A-Za-z0-9_-]{43}$/);
    expect(rotated).not.toBe(client.registration_access_token);
    await oauth2Error(await manage(client, "GET"), 401, "invalid_token");
    await oauth2Error(
      await manage(client, "PUT", undefined, { client_id: client.client_id, redirect_uris: [REDIRECT_URI] }),
      401,
      "invalid_token",
    );
    expect((await manage(client, "GET", rotated)).status).toBe(200);
    expect((await manage(client, "DELETE", rotated)).status).toBe(204);
  });

  it("DELETE makes the client unusable: no tokens, no authorization, no refresh of what it had", async () => {
    const client = await registered(open, { grant_types: ["authorization_code", "refresh_token"] });
    const session = await signUp(open);
    const { code } = await codeFor(open, asWire(client), session, { scope: "openid offline_access" });
    const tokens = (await (await exchange(open, asWire(client), code)).json()) as { refresh_token: string };
    expect((await manage(client, "DELETE")).status).toBe(204);
    await oauth2Error(
      await postForm(
        open,
        "/oauth2/token",
        { grant_type: "refresh_token", refresh_token: tokens.refresh_token },
        basic(asWire(client)),
      ),
      401,
      "invalid_client",
    );
    await oauth2Error(await manage(client, "GET"), 401, "invalid_token");
    const authorize = await open.request(
      "GET",
      `/oauth2/authorize?client_id=${client.client_id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&response_type=code`,
    );
    await oauth2Error(authorize, 401, "invalid_client");
    expect((await adminView(open, client.client_id)).status).toBe(404);
    const grants = await allInShards("SELECT id FROM oauth2_grants WHERE client_id = ?", client.client_id);
    expect(grants).toEqual([]);
  });
});

describe("unused registered clients expire", () => {
  it("the daily cron deletes registered clients unused for the TTL, with their grants; an admin's clients stay", async () => {
    const stale = await registered(open, { grant_types: ["authorization_code", "refresh_token"] });
    const session = await signUp(open);
    const { code } = await codeFor(open, asWire(stale), session, { scope: "openid offline_access" });
    expect((await exchange(open, asWire(stale), code)).status).toBe(200);
    const fresh = await registered(open, {});
    const byAdmin = await newClient(open);
    const ttlMs = getConfig(open.env).oauth2.registrationTtl * 1000;
    const longAgo = Date.now() - ttlMs - 60_000;
    for (const id of [stale.client_id, byAdmin.clientId]) {
      await env.DB.prepare(
        "UPDATE oauth2_clients SET created_at = ?, last_used_at = NULL WHERE client_id = ?",
      )
        .bind(longAgo, id)
        .run();
    }
    await runHousekeeping(open.env, getConfig(open.env));
    expect((await adminView(open, stale.client_id)).status).toBe(404);
    expect((await adminView(open, fresh.client_id)).status).toBe(200);
    expect((await adminView(open, byAdmin.clientId)).status).toBe(200);
    const grants = await allInShards("SELECT id FROM oauth2_grants WHERE client_id = ?", stale.client_id);
    expect(grants).toEqual([]);
  });
});
