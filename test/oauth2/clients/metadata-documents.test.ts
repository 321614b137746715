// Client ID metadata documents (contract §3.6): an https client_id names the client's own JSON document. Threats: a
// document that claims another client's identity (its client_id differs from its URL), a redirect to a URI the
// document does not list, the server made to follow redirects or read an endless body (SSRF amplification, memory),
// a document fetched on every request (the server as a traffic amplifier), a loopback document accepted in
// production, and a person misled by the name a document gives itself (the consent screen shows its host).
// Issue 28: a document served by the service itself (a storage file, any path of its own hosts) passed off as a
// publisher's; documents accepted with registration off, uncounted, and stored before the request was valid (a
// flood of rows); a slow document turned into a 500; the fetch aimed at loopback, private and IP-literal hosts, with
// an error text that told which ports answer (SSRF, port scanning).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../../src/lib/crypto";
import { forgetOAuth2Client, type WireClient } from "../../../src/oauth2/clients";
import { ADDRESS_LIMITER_BINDINGS } from "../../../src/rate-limits/buckets";
import { decodeJwt, SERVER, signUp, type TestService, uniqueAddress, uniqueEmail } from "../../helpers";
import { failingShards } from "../../support/faults";
import { withShortTimeouts } from "../../support/timeouts";
import { Browser, signIn } from "../page-browser";
import {
  location,
  newClient,
  oauth2Error,
  postForm,
  provider,
  REDIRECT_URI,
  requestIdOf,
  s256,
  VERIFIER,
} from "../support";

/** Documents are on by default where registration is open (contract §3.6). */
const svc = provider({ AUTH_OAUTH2_PROVIDER_REGISTRATION: "open" });
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const DOCS = "https://client-docs.fake";

/** The one answer to every document that could not be fetched, whatever went wrong: it says nothing of how. */
const UNFETCHABLE = "the client metadata document could not be fetched";
const REFUSED_URL = "this client_id cannot name a client metadata document";

/** Publishes a document at a fresh path of the fake host; returns its URL (the client id). */
async function publish(
  document: (url: string) => unknown,
  options: { cacheControl?: string; contentType?: string } = {},
): Promise<string> {
  const path = `/mcp/${crypto.randomUUID()}.json`;
  const url = `${DOCS}${path}`;
  const query = new URLSearchParams({
    path,
    ...(options.cacheControl ? { "cache-control": options.cacheControl } : {}),
    ...(options.contentType ? { "content-type": options.contentType } : {}),
  });
  await env.OUTBOUND!.fetch(`${DOCS}/__doc?${query}`, {
    method: "PUT",
    body: JSON.stringify(document(url)),
  });
  return url;
}

const fetchesOf = async (url: string) =>
  (await (await env.OUTBOUND!.fetch(`${DOCS}/__fetches?path=${new URL(url).pathname}`)).json()) as number;

const agentDocument = (url: string) => ({
  client_id: url,
  client_name: "Claude-like Agent",
  client_uri: "https://client-docs.fake",
  redirect_uris: ["http://127.0.0.1/callback"],
  grant_types: ["authorization_code", "refresh_token"],
  token_endpoint_auth_method: "none",
});

async function authorizeAs(
  clientId: string,
  options: {
    service?: TestService;
    redirectUri?: string;
    params?: Record<string, string>;
    headers?: Record<string, string>;
  } = {},
) {
  return (options.service ?? svc).request(
    "GET",
    `/oauth2/authorize?${new URLSearchParams({
      client_id: clientId,
      redirect_uri: options.redirectUri ?? "http://127.0.0.1:47011/callback",
      response_type: "code",
      scope: "openid offline_access",
      state: "s",
      code_challenge: await s256(VERIFIER),
      code_challenge_method: "S256",
      ...options.params,
    })}`,
    { headers: options.headers },
  );
}

/** What the service stored about a document: its client row and its KV freshness mark. */
async function storedFor(url: string) {
  const row = await env.DB.prepare("SELECT client_id FROM oauth2_clients WHERE client_id = ?")
    .bind(url)
    .first();
  const mark = await env.OAUTH2_REQUESTS.get(`oauth2:client-document:${await sha256Hex(url)}`);
  return { row: row !== null, mark: mark !== null };
}

describe("client ID metadata documents", () => {
  it("a document's URL is a client id: authorize, sign in, exchange, refresh, as a public native client", async () => {
    const clientId = await publish(agentDocument);
    const requestId = await requestIdOf(await authorizeAs(clientId));
    const session = await signUp(svc);
    const completed = await svc.post("/oauth2/login", { requestId }, session.accessToken);
    expect(completed.status).toBe(200);
    const redirect = new URL(((await completed.json()) as { redirectUri: string }).redirectUri);
    expect(redirect.origin).toBe("http://127.0.0.1:47011");
    const tokens = await postForm(svc, "/oauth2/token", {
      grant_type: "authorization_code",
      code: redirect.searchParams.get("code")!,
      redirect_uri: "http://127.0.0.1:47011/callback",
      client_id: clientId,
      code_verifier: VERIFIER,
    });
    expect(tokens.status).toBe(200);
    const answer = (await tokens.json()) as { access_token: string; refresh_token: string };
    expect(decodeJwt(answer.access_token).payload).toMatchObject({ client_id: clientId, aud: clientId });
    const refreshed = await postForm(svc, "/oauth2/token", {
      grant_type: "refresh_token",
      refresh_token: answer.refresh_token,
      client_id: clientId,
    });
    expect(refreshed.status).toBe(200);
    // The admin API shows where the client came from.
    const listed = await svc.request("GET", `/admin/oauth2/clients/${encodeURIComponent(clientId)}`, {
      headers: ADMIN,
    });
    expect(await listed.json()).toMatchObject({
      registration: "metadata-document",
      clientName: "Claude-like Agent",
      tokenEndpointAuthMethod: "none",
    } satisfies Partial<WireClient>);
  });

  it("refuses a document whose client_id is not its own URL", async () => {
    const clientId = await publish((url) => ({
      ...agentDocument(url),
      client_id: `${DOCS}/someone-else.json`,
    }));
    const body = await oauth2Error(await authorizeAs(clientId), 401, "invalid_client");
    expect(body.error_description).toContain("client_id is not its own URL");
  });

  it("refuses a document without client_name or redirect_uris, or describing a confidential client", async () => {
    for (const change of [
      { client_name: undefined },
      { redirect_uris: undefined },
      { token_endpoint_auth_method: "client_secret_basic" },
      { redirect_uris: ["javascript:alert(1)//"] },
      { grant_types: ["client_credentials"] },
    ]) {
      const clientId = await publish((url) => ({ ...agentDocument(url), ...change }));
      await oauth2Error(await authorizeAs(clientId), 401, "invalid_client");
    }
  });

  it("sends the browser only to a redirect URI the document lists", async () => {
    const clientId = await publish(agentDocument);
    await oauth2Error(
      await authorizeAs(clientId, { redirectUri: "https://attacker.example/callback" }),
      400,
      "invalid_request",
    );
  });

  // Port scanning through the error text: every way a fetch can fail answers the same words; the log has the reason.
  it("follows no redirect, reads no more than 16 KiB, needs a 200 JSON answer, and never says which check failed", async () => {
    const asText = await publish(agentDocument, { contentType: "text/plain" });
    const asHtml = await publish(agentDocument, { contentType: "text/html; charset=utf-8" });
    const notJson = await publish(() => "not an object");
    const descriptions = new Set<string>();
    for (const clientId of [
      `${DOCS}/redirect/client.json`,
      `${DOCS}/big.json`,
      `${DOCS}/missing.json`,
      asText,
      asHtml,
      notJson,
      "https://no-fake-for-this.example/client.json",
    ]) {
      const body = await oauth2Error(await authorizeAs(clientId), 401, "invalid_client");
      descriptions.add(body.error_description);
    }
    expect([...descriptions]).toEqual([expect.stringContaining(UNFETCHABLE)]);
    expect([...descriptions][0]).not.toMatch(
      /302|404|502|larger than|text\/|html|not JSON|timeout|unreachable/i,
    );
    expect(await fetchesOf(`${DOCS}/elsewhere.json`)).toBe(0);
  });

  it("a +json content type is JSON too", async () => {
    const clientId = await publish(agentDocument, { contentType: "application/ld+json; charset=utf-8" });
    await requestIdOf(await authorizeAs(clientId));
  });

  it("keeps a fetched document as its Cache-Control allows, instead of fetching it for every request", async () => {
    const clientId = await publish(agentDocument, { cacheControl: "max-age=3600" });
    await requestIdOf(await authorizeAs(clientId));
    forgetOAuth2Client(clientId); // past the isolate's own ten-second cache: KV must answer
    await requestIdOf(await authorizeAs(clientId));
    expect(await fetchesOf(clientId)).toBe(1);
  });

  // Finding 3: the fetch's timeout escaped as a 500 (a fetcher that ignores the abort, a body that never ends).
  it("a document that answers too slowly, or never finishes its body, is invalid_client within the time bound", async () => {
    const started = Date.now();
    let answers: Response[] = [];
    // The service's own 5 s bound, asked for by each fetch and waited out in a tenth of it (test/support/timeouts.ts).
    const requested = await withShortTimeouts(5_000, async () => {
      answers = await Promise.all([
        authorizeAs(`${DOCS}/slow/${crypto.randomUUID()}.json`),
        authorizeAs(`${DOCS}/stall/${crypto.randomUUID()}.json`),
      ]);
    });
    expect(requested).toEqual([5_000, 5_000]);
    const [slow, stalled] = answers;
    for (const response of [slow!, stalled!]) {
      const body = await oauth2Error(response, 401, "invalid_client");
      expect(body.error_description).toContain(UNFETCHABLE);
    }
    expect(Date.now() - started).toBeLessThan(7500);
  }, 20_000);

  it("the consent screen names the document's host, where the browser goes back to, and warns of a local app", async () => {
    const clientId = await publish(agentDocument);
    const email = uniqueEmail();
    await signUp(svc, email);
    const browser = new Browser(svc);
    const start = await authorizeAs(clientId);
    const requestId = await requestIdOf(start);
    await browser.get(location(start).toString());
    const consent = await signIn(browser, requestId, email);
    const html = await consent.text();
    expect(html).toContain("Claude-like Agent");
    expect(html).toContain("Published by <strong>client-docs.fake</strong>");
    expect(html).toContain("Sends you back to <strong>127.0.0.1:47011</strong>");
    expect(html).toContain("This app runs on your own computer");
  });
});

// Finding 4: the contract's outbound-URL policy (§1). Every refusal happens before anything is fetched, and says so.
describe("where a document may be fetched from", () => {
  it("never from loopback, private, link-local or IP-literal hosts, in any spelling, nor with credentials or http", async () => {
    for (const clientId of [
      "https://127.0.0.1/client.json",
      "https://2130706433/client.json", // 127.0.0.1 in decimal
      "https://0x7f.0.0.1/client.json", // in hex
      "https://0177.0.0.01/client.json", // in octal
      "https://127.1/client.json",
      "https://10.0.0.8/client.json",
      "https://192.168.1.20/client.json",
      "https://169.254.169.254/latest/meta-data",
      "https://[::1]/client.json",
      "https://[::ffff:127.0.0.1]/client.json", // IPv4-mapped IPv6
      "https://[fe80::1]/client.json",
      "https://[fd00::8]/client.json",
      "https://localhost/client.json",
      "https://localhost./client.json",
      "https://admin.localhost/client.json",
      "https://printer.local/client.json",
      "https://metadata.google.internal/computeMetadata/v1",
      "https://intranet/client.json",
      "https://user:secret@client-docs.fake/client.json",
      "http://client-docs.fake/client.json",
    ]) {
      const body = await oauth2Error(await authorizeAs(clientId), 401, "invalid_client");
      expect(body.error_description, clientId).toContain(REFUSED_URL);
    }
    expect(await fetchesOf(`${DOCS}/client.json`)).toBe(0);
  });

  it("loopback http only with AUTH_OUTBOUND_ALLOW_LOCAL, and only while the service itself is local", async () => {
    const loopbackId = "http://127.0.0.1:9/client.json";
    // The suite's server is local, but the switch is off: refused like any other local host.
    const off = await oauth2Error(await authorizeAs(loopbackId), 401, "invalid_client");
    expect(off.error_description).toContain(REFUSED_URL);
    // Switched on: fetched (nothing listens there; the fake answers 502), and refused in the same words as any fetch.
    const local = provider({ AUTH_OAUTH2_PROVIDER_REGISTRATION: "open", AUTH_OUTBOUND_ALLOW_LOCAL: "true" });
    const fetched = await oauth2Error(
      await authorizeAs(loopbackId, { service: local }),
      401,
      "invalid_client",
    );
    expect(fetched.error_description).toContain(UNFETCHABLE);
    // A production server ignores the switch.
    const production = provider({
      AUTH_SERVER_URL: "https://auth.example.com/auth/v1",
      AUTH_DEV_MAILBOX: "false",
      AUTH_OAUTH2_PROVIDER_REGISTRATION: "open",
      AUTH_OUTBOUND_ALLOW_LOCAL: "true",
    });
    const refused = await oauth2Error(
      await authorizeAs(loopbackId, { service: production }),
      401,
      "invalid_client",
    );
    expect(refused.error_description).toContain(REFUSED_URL);
  });

  // Finding 1: a file the service serves itself (storage, a presigned URL, a public bucket) would make the consent
  // screen say "Published by" the service's own host.
  it("never from the service's own hosts: auth, storage, the client URL and the allowed redirect URLs", async () => {
    const production = provider({
      AUTH_SERVER_URL: "https://auth.example.com/auth/v1",
      STORAGE_SERVER_URL: "https://files.example.com",
      AUTH_CLIENT_URL: "https://app.example.com",
      AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: "https://*.partner.example/cb,com.example.app://cb",
      AUTH_DEV_MAILBOX: "false",
      AUTH_OAUTH2_PROVIDER_REGISTRATION: "open",
    });
    for (const clientId of [
      "https://auth.example.com/storage/v1/files/0b7a/presignedurl?X-Amz-Signature=abc",
      "https://auth.example.com:8443/client.json",
      "https://AUTH.example.com./client.json",
      "https://files.example.com/storage/v1/files/public/client.json",
      "https://app.example.com/client.json",
      "https://shop.partner.example/client.json",
    ]) {
      const body = await oauth2Error(
        await authorizeAs(clientId, { service: production }),
        401,
        "invalid_client",
      );
      expect(body.error_description, clientId).toContain(REFUSED_URL);
    }
    // On a development server with local fetches allowed, the service's own port is refused too.
    const local = provider({ AUTH_OAUTH2_PROVIDER_REGISTRATION: "open", AUTH_OUTBOUND_ALLOW_LOCAL: "true" });
    const own = await oauth2Error(
      await authorizeAs(`${SERVER}/storage/v1/files/x`, { service: local }),
      401,
      "invalid_client",
    );
    expect(own.error_description).toContain(REFUSED_URL);
  });
});

// Finding 2: documents had no switch of their own, were not counted, and stored a client before the request was valid.
describe("the documents' switch, their count and what they store", () => {
  const discoveryFlag = async (service: TestService) =>
    ((await (await service.get("/.well-known/openid-configuration")).json()) as Record<string, unknown>)
      .client_id_metadata_document_supported;

  it("AUTH_OAUTH2_PROVIDER_CLIENT_ID_DOCUMENTS: on by default only where registration is open; discovery says so", async () => {
    const clientId = await publish(agentDocument);
    const closed = provider();
    const body = await oauth2Error(await authorizeAs(clientId, { service: closed }), 401, "invalid_client");
    expect(body.error_description).toContain("not accepted");
    expect(await discoveryFlag(closed)).toBe(false);
    expect(await fetchesOf(clientId)).toBe(0);
    const authenticated = provider({ AUTH_OAUTH2_PROVIDER_REGISTRATION: "authenticated" });
    await oauth2Error(await authorizeAs(clientId, { service: authenticated }), 401, "invalid_client");
    expect(await discoveryFlag(authenticated)).toBe(false);

    const documentsOnly = provider({ AUTH_OAUTH2_PROVIDER_CLIENT_ID_DOCUMENTS: "on" });
    await requestIdOf(await authorizeAs(clientId, { service: documentsOnly }));
    expect(await discoveryFlag(documentsOnly)).toBe(true);
    expect(await discoveryFlag(svc)).toBe(true);

    const openWithout = provider({
      AUTH_OAUTH2_PROVIDER_REGISTRATION: "open",
      AUTH_OAUTH2_PROVIDER_CLIENT_ID_DOCUMENTS: "off",
    });
    await oauth2Error(await authorizeAs(clientId, { service: openWithout }), 401, "invalid_client");
    expect(await discoveryFlag(openWithout)).toBe(false);
  });

  it("a first fetch counts in the registration limit; a document kept in KV does not", async () => {
    const noBindings = Object.fromEntries(
      Object.values(ADDRESS_LIMITER_BINDINGS).map((name) => [name, undefined]),
    );
    const limited = provider({
      AUTH_OAUTH2_PROVIDER_REGISTRATION: "open",
      AUTH_RATE_LIMIT_ENABLE: "true",
      AUTH_RATE_LIMIT_REGISTRATION_BURST: "2",
      ...noBindings,
    });
    const headers = { "cf-connecting-ip": uniqueAddress() };
    const first = await publish(agentDocument, { cacheControl: "max-age=3600" });
    const second = await publish(agentDocument);
    const third = await publish(agentDocument);
    await requestIdOf(await authorizeAs(first, { service: limited, headers }));
    await requestIdOf(await authorizeAs(second, { service: limited, headers }));
    const refused = await authorizeAs(third, { service: limited, headers });
    expect(refused.status).toBe(429);
    expect(await fetchesOf(third)).toBe(0);
    // Kept: no fetch, no count.
    forgetOAuth2Client(first);
    await requestIdOf(await authorizeAs(first, { service: limited, headers }));
    // Another address is not affected.
    await requestIdOf(
      await authorizeAs(third, { service: limited, headers: { "cf-connecting-ip": uniqueAddress() } }),
    );
  });

  it("stores nothing, in D1 or KV, until the authorization request is valid; then the client and its mark", async () => {
    const clientId = await publish(agentDocument);
    const invalid: { redirectUri?: string; params?: Record<string, string> }[] = [
      { redirectUri: "https://attacker.example/cb" },
      { params: { scope: "openid graphql-admin" } },
      { params: { code_challenge_method: "plain" } },
      { params: { response_type: "token" } },
      { params: { resource: "https://not-a-resource.example" } },
      { params: { prompt: "sometimes" } },
    ];
    const answers = await Promise.all(
      [...invalid, ...invalid, ...invalid, ...invalid, ...invalid].map((options) =>
        authorizeAs(clientId, options),
      ),
    );
    for (const answer of answers) {
      expect(answer.status === 400 || answer.status === 302, String(answer.status)).toBe(true);
      if (answer.status === 302) expect(location(answer).searchParams.get("error")).toBeTruthy();
    }
    expect(await storedFor(clientId)).toEqual({ row: false, mark: false });
    await requestIdOf(await authorizeAs(clientId));
    expect(await storedFor(clientId)).toEqual({ row: true, mark: true });
  });

  it("a document fetched again keeps what an admin set on its client (its resources)", async () => {
    const apis = provider({
      AUTH_OAUTH2_PROVIDER_REGISTRATION: "open",
      AUTH_OAUTH2_PROVIDER_RESOURCES: "https://a.example/api,https://b.example/api",
    });
    const clientId = await publish(agentDocument);
    await requestIdOf(await authorizeAs(clientId, { service: apis }));
    const narrowed = await apis.request("PUT", `/admin/oauth2/clients/${encodeURIComponent(clientId)}`, {
      headers: ADMIN,
      json: {
        clientName: "Claude-like Agent",
        redirectUris: ["http://127.0.0.1/callback"],
        tokenEndpointAuthMethod: "none",
        applicationType: "native",
        resources: ["https://a.example/api"],
      },
    });
    expect(narrowed.status).toBe(200);
    // Its document is stale: the next request fetches it again.
    await env.OAUTH2_REQUESTS.delete(`oauth2:client-document:${await sha256Hex(clientId)}`);
    forgetOAuth2Client(clientId);
    const wider = await authorizeAs(clientId, {
      service: apis,
      params: { resource: "https://b.example/api" },
    });
    expect(location(wider).searchParams.get("error")).toBe("invalid_target");
    expect(await fetchesOf(clientId)).toBe(2);
    await requestIdOf(
      await authorizeAs(clientId, { service: apis, params: { resource: "https://a.example/api" } }),
    );
  });

  // Threat: the token endpoint, finding the document's mark expired, fetches it again and refreshes its row and mark
  // once the grant is made: that write failing answered 503 after the code was spent, and the client's retry read as
  // a replay (its grant revoked). The refresh is bookkeeping, after the answer; the next request fetches again.
  it("a document fetched again at the token endpoint: its row failing to be kept does not fail the exchange", async () => {
    const clientId = await publish(agentDocument);
    const requestId = await requestIdOf(await authorizeAs(clientId));
    const session = await signUp(svc);
    const completed = await svc.post("/oauth2/login", { requestId }, session.accessToken);
    const code = new URL(((await completed.json()) as { redirectUri: string }).redirectUri).searchParams.get(
      "code",
    )!;
    await env.OAUTH2_REQUESTS.delete(`oauth2:client-document:${await sha256Hex(clientId)}`);
    forgetOAuth2Client(clientId);
    const fetched = await fetchesOf(clientId);
    const { bindings, fault } = failingShards(env, { match: /^insert into "oauth2_clients"/i, times: 1 });
    const tokens = await postForm(
      provider({ AUTH_OAUTH2_PROVIDER_REGISTRATION: "open", ...bindings }),
      "/oauth2/token",
      {
        grant_type: "authorization_code",
        code,
        redirect_uri: "http://127.0.0.1:47011/callback",
        client_id: clientId,
        code_verifier: VERIFIER,
      },
    );
    expect(tokens.status, await tokens.clone().text()).toBe(200);
    expect(fault.failures).toBe(1);
    expect(await fetchesOf(clientId)).toBe(fetched + 1);
    // Not kept: no mark, so the next request fetches the document again (and keeps it then).
    expect((await storedFor(clientId)).mark).toBe(false);
  });

  it("a device authorization stores the client only once its request is valid", async () => {
    const clientId = await publish((url) => ({
      ...agentDocument(url),
      grant_types: ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"],
      redirect_uris: [],
    }));
    await oauth2Error(
      await postForm(svc, "/oauth2/device_authorization", { client_id: clientId, scope: "openid admin" }),
      400,
      "invalid_scope",
    );
    expect(await storedFor(clientId)).toEqual({ row: false, mark: false });
    const started = await postForm(svc, "/oauth2/device_authorization", {
      client_id: clientId,
      scope: "openid",
    });
    expect(started.status).toBe(200);
    expect(await storedFor(clientId)).toEqual({ row: true, mark: true });
  });
});

describe("the consent screen of clients nobody reviewed", () => {
  async function consentHtml(service: TestService, clientId: string, redirectUri: string) {
    const email = uniqueEmail();
    await signUp(service, email);
    const browser = new Browser(service);
    const start = await service.request(
      "GET",
      `/oauth2/authorize?${new URLSearchParams({
        client_id: clientId,
        redirect_uri: redirectUri,
        response_type: "code",
        scope: "openid",
        code_challenge: await s256(VERIFIER),
        code_challenge_method: "S256",
      })}`,
    );
    const requestId = await requestIdOf(start);
    await browser.get(location(start).toString());
    return (await signIn(browser, requestId, email)).text();
  }

  it("shows where a self-registered client sends the browser back to; an admin's client needs no such line", async () => {
    const registered = await svc.request("POST", "/oauth2/register", {
      json: {
        client_name: "Totally Your Bank",
        redirect_uris: ["https://collector.example/cb"],
        token_endpoint_auth_method: "none",
      },
    });
    expect(registered.status).toBe(201);
    const { client_id } = (await registered.json()) as { client_id: string };
    const html = await consentHtml(svc, client_id, "https://collector.example/cb");
    expect(html).toContain("Sends you back to <strong>collector.example</strong>");
    expect(html).toContain("This app registered itself");

    const admins = await newClient(svc, { tokenEndpointAuthMethod: "none" });
    const reviewed = await consentHtml(svc, admins.clientId, REDIRECT_URI);
    expect(reviewed).not.toContain("Sends you back to");
  });
});
