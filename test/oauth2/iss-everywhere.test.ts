// RFC 9207 everywhere: every answer that sends the browser back to a client's redirect URI, success or error, names
// this server in `iss`, once, so a client that talks to several authorization servers can tell which one answered.
// Threat: the mix-up attack (RFC 9700 §4.4): an attacker's server gets a client to send a code (or act on an error)
// meant for another server. The walk below goes through every way back to a client; device flows have no redirect
// URI and end on the service's own page, which it checks too.
import { describe, expect, it } from "vitest";
import type { WireClient } from "../../src/oauth2/clients";
import { signUp, uniqueEmail } from "../helpers";
import { Browser, signIn } from "./page-browser";
import {
  authorize,
  basic,
  form,
  ISSUER,
  location,
  newClient,
  postForm,
  provider,
  REDIRECT_URI,
  requestIdOf,
  s256,
  VERIFIER,
} from "./support";

const svc = provider();
const external = provider({ AUTH_OAUTH2_PROVIDER_LOGIN_URL: "https://login.example.com/oauth2" });
/** A registered redirect URI with a query of its own, which every answer keeps. */
const WITH_QUERY = "https://rp.example.com/callback?tenant=acme";

/** Checks one way back to the client: the registered URI, its own query kept, `iss` once and right. */
function expectIss(way: string, back: URL, registered = REDIRECT_URI) {
  const base = new URL(registered);
  expect(`${back.origin}${back.pathname}`, way).toBe(`${base.origin}${base.pathname}`);
  for (const [name, value] of base.searchParams) expect(back.searchParams.get(name), way).toBe(value);
  expect(back.searchParams.getAll("iss"), way).toEqual([ISSUER]);
  expect(back.searchParams.has("code") || back.searchParams.has("error"), way).toBe(true);
}

async function pageRequest(browser: Browser, client: WireClient, params: Record<string, string> = {}) {
  const response = await authorize(browser.svc, client, params);
  const requestId = await requestIdOf(response);
  await browser.get(location(response).toString());
  return requestId;
}

describe("iss in every authorization response (RFC 9207)", () => {
  it("walks every way back to a client: codes and errors, from every endpoint and page", async () => {
    const client = await newClient(svc, {
      redirectUris: [REDIRECT_URI, WITH_QUERY],
      scopes: ["openid", "profile", "email"],
    });
    const ways: [string, URL, string?][] = [];

    // 1. The authorization endpoint's own error redirects.
    const errorsAt = {
      unsupported_response_type: { response_type: "token" },
      invalid_scope: { scope: "openid graphql" },
      invalid_request: { code_challenge: "x", code_challenge_method: "plain" },
      invalid_target: { resource: "https://not-served.example/api" },
    };
    for (const [error, params] of Object.entries(errorsAt)) {
      const back = location(await authorize(svc, client, params));
      expect(back.searchParams.get("error")).toBe(error);
      ways.push([`authorize: ${error}`, back]);
    }
    const noCodeGrant = await newClient(svc, { grantTypes: ["client_credentials"] });
    ways.push(["authorize: unauthorized_client", location(await authorize(svc, noCodeGrant))]);
    const publicClient = await newClient(svc, { tokenEndpointAuthMethod: "none" });
    ways.push(["authorize: public client without PKCE", location(await authorize(svc, publicClient))]);
    const requiresPar = await newClient(svc, { requirePushedAuthorizationRequests: true });
    ways.push(["authorize: PAR required", location(await authorize(svc, requiresPar))]);
    ways.push([
      "authorize: an error to a redirect URI with a query",
      location(await authorize(svc, client, { redirect_uri: WITH_QUERY, scope: "openid graphql" })),
      WITH_QUERY,
    ]);

    // 2. prompt=none: login_required, consent_required, then a code.
    const { user } = await signUp(svc, uniqueEmail());
    const browser = new Browser(svc);
    ways.push(["prompt=none: login_required", location(await authorize(svc, client, { prompt: "none" }))]);
    const requestId = await pageRequest(browser, client, { scope: "openid" });
    await signIn(browser, requestId, user.email);
    const silent = () =>
      svc.request(
        "GET",
        `/oauth2/authorize?${form({ client_id: client.clientId, redirect_uri: REDIRECT_URI, response_type: "code", scope: "openid", prompt: "none", state: "s" })}`,
        { headers: { cookie: browser.cookie } },
      );
    ways.push(["prompt=none: consent_required", location(await silent())]);

    // 3. The built-in page: consent allowed (a code), then a remembered consent (a code at once), then denied.
    ways.push([
      "page: consent allowed",
      location(
        await browser.post("/oauth2/interaction/consent", { request_id: requestId, decision: "allow" }),
      ),
    ]);
    ways.push(["prompt=none: a code", location(await silent())]);
    const remembered = await authorize(svc, client, { scope: "openid" });
    ways.push(["page: remembered consent", location(await browser.get(location(remembered).toString()))]);
    const another = await pageRequest(browser, client, { scope: "openid email", redirect_uri: WITH_QUERY });
    ways.push([
      "page: consent denied",
      location(await browser.post("/oauth2/interaction/consent", { request_id: another, decision: "deny" })),
      WITH_QUERY,
    ]);

    // 4. The JSON login step (an external login UI) and a pushed request.
    const session = await signUp(svc);
    const viaUi = await external.post(
      "/oauth2/login",
      { requestId: await requestIdOf(await authorize(external, client)) },
      session.accessToken,
    );
    ways.push([
      "external login UI: a code",
      new URL(((await viaUi.json()) as { redirectUri: string }).redirectUri),
    ]);
    ways.push([
      "external login UI: prompt=none",
      location(await authorize(external, client, { prompt: "none" })),
    ]);
    const pushed = await postForm(
      svc,
      "/oauth2/par",
      {
        response_type: "code",
        redirect_uri: REDIRECT_URI,
        scope: "openid",
        code_challenge: await s256(VERIFIER),
        code_challenge_method: "S256",
      },
      basic(client),
    );
    const { request_uri } = (await pushed.json()) as { request_uri: string };
    const pushedRequest = await requestIdOf(
      await svc.request("GET", `/oauth2/authorize?${form({ client_id: client.clientId, request_uri })}`),
    );
    const viaPar = await svc.post("/oauth2/login", { requestId: pushedRequest }, session.accessToken);
    ways.push(["PAR: a code", new URL(((await viaPar.json()) as { redirectUri: string }).redirectUri)]);

    expect(ways.length).toBeGreaterThanOrEqual(17);
    for (const [way, back, registered] of ways) expectIss(way, back, registered);
  });

  it("a device flow never redirects to a client: approval and denial end on the service's page", async () => {
    const client = await newClient(svc, {
      tokenEndpointAuthMethod: "none",
      grantTypes: ["urn:ietf:params:oauth:grant-type:device_code"],
      redirectUris: [],
    });
    const email = uniqueEmail();
    await signUp(svc, email);
    for (const decision of ["allow", "deny"]) {
      const started = await postForm(svc, "/oauth2/device_authorization", { client_id: client.clientId });
      const { user_code } = (await started.json()) as { user_code: string };
      const browser = new Browser(svc);
      const entered = await browser.post("/oauth2/device", { user_code });
      const requestId = location(entered).searchParams.get("request_id")!;
      await browser.get(location(entered).toString());
      await signIn(browser, requestId, email);
      const decided = await browser.post("/oauth2/interaction/consent", { request_id: requestId, decision });
      expect(decided.status, decision).toBe(200);
      expect(decided.headers.get("location"), decision).toBeNull();
    }
  });
});
