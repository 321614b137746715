// FedCM's identity provider (W3C Federated Credential Management; src/fedcm/, docs/fedcm.md), every endpoint through
// the real HTTP surface as Chrome calls it: `Sec-Fetch-Dest: webidentity`, the page's `Origin` where the spec sends it,
// the SameSite=None twin of the hosted pages' cookie. The Chromium walk is test/compat/fedcm.test.ts.
// Threats: a page's own script reading the accounts list or posting an assertion (no webidentity marker), a relying
// party minting a code for another client (the Origin check, spec § Identity assertion endpoint "MUST check the
// Origin"), an unregistered origin learning anything of the account or the client, a new consent without the
// browser's disclosure, a code redeemed by someone without the PKCE verifier, by another client, or with a redirect.

import { env } from "cloudflare:test";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { PASSWORD, SERVER, signUp } from "../helpers";
import { Browser } from "../oauth2/page-browser";
import {
  ADMIN,
  authorize,
  ISSUER,
  newClient,
  oauth2Error,
  postForm,
  provider,
  requestIdOf,
  s256,
  VERIFIER,
} from "../oauth2/support";
import { failingD1 } from "../support/faults";
import { userD1 } from "../support/shards";

// Impersonation on: its sessions are nobody for FedCM (operators.md §1).
const svc = provider({ AUTH_IMPERSONATION_ENABLED: "true" });
const RP = "https://rp.example.com";
const OTHER_RP = "https://evil.example.net";
const PROMPT = { "sec-fetch-dest": "webidentity" };

/** A public client of the relying party at `RP`, with its policy and terms. */
const rpClient = () =>
  newClient(svc, {
    tokenEndpointAuthMethod: "none",
    fedcmOrigins: [RP, "http://localhost:5173"],
    policyUri: `${RP}/privacy`,
    tosUri: `${RP}/terms`,
  });

/** A person signed in to the hosted pages in `browser`: the sign-in step of the built-in page, as a browser posts it. */
async function signedInBrowser() {
  const session = await signUp(svc);
  const client = await newClient(svc);
  const browser = new Browser(svc);
  const requestId = await requestIdOf(await authorize(svc, client));
  const response = await browser.post("/oauth2/interaction/sign-in", {
    request_id: requestId,
    email: session.user.email,
    password: PASSWORD,
  });
  expect(response.status).toBe(303);
  return { browser, response, user: session.user };
}

/** The FedCM cookie alone: what Chrome sends the accounts and assertion endpoints (only SameSite=None cookies). */
const fedcmCookie = (browser: Browser) => `fedcm_session=${browser.jar.get("fedcm_session")}`;

function assertion(cookie: string, origin: string, values: Record<string, string>, headers = PROMPT) {
  return postForm(svc, "/fedcm/assertion", values, { cookie, origin, ...headers });
}

const pkce = async (extra: Record<string, string> = {}) =>
  JSON.stringify({ code_challenge: await s256(VERIFIER), code_challenge_method: "S256", ...extra });

describe("FedCM identity provider (W3C FedCM)", () => {
  it("serves the well-known file at the origin's root and the config file, only to the browser's prompt (§ The Well-Known File, § The config file)", async () => {
    const wellKnown = await svc.request("GET", `${SERVER}/.well-known/web-identity`, { headers: PROMPT });
    expect(wellKnown.status).toBe(200);
    expect(await wellKnown.json()).toEqual({
      provider_urls: [`${ISSUER}/fedcm/config.json`],
      accounts_endpoint: `${ISSUER}/fedcm/accounts`,
      login_url: `${ISSUER}/account/fedcm-login`,
    });
    const config = await svc.request("GET", "/fedcm/config.json", { headers: PROMPT });
    expect(config.status).toBe(200);
    expect(await config.json()).toMatchObject({
      accounts_endpoint: `${ISSUER}/fedcm/accounts`,
      client_metadata_endpoint: `${ISSUER}/fedcm/client-metadata`,
      id_assertion_endpoint: `${ISSUER}/fedcm/assertion`,
      disconnect_endpoint: `${ISSUER}/fedcm/disconnect`,
      login_url: `${ISSUER}/account/fedcm-login`,
    });
    // A page's fetch carries no webidentity marker (another `Sec-Fetch-Dest`, or none): refused, every endpoint.
    for (const [method, path] of [
      ["GET", `${SERVER}/.well-known/web-identity`],
      ["GET", "/fedcm/config.json"],
      ["GET", "/fedcm/accounts"],
      ["GET", "/fedcm/client-metadata?client_id=x"],
      ["POST", "/fedcm/assertion"],
      ["POST", "/fedcm/disconnect"],
    ] as const) {
      for (const headers of [{}, { "sec-fetch-dest": "empty", origin: RP }] as Record<string, string>[]) {
        const plain = await svc.request(method, path, { headers });
        expect(plain.status, `${method} ${path}`).toBe(400);
        expect(await plain.json()).toEqual({ error: { code: "invalid_request" } });
      }
    }
    // Off with the authorization server: the assertion is one of its codes.
    const off = provider({ AUTH_OAUTH2_PROVIDER_ENABLED: "false" });
    expect((await off.request("GET", "/fedcm/config.json", { headers: PROMPT })).status).toBe(404);
  });

  it("signs in with Set-Login: logged-in and a SameSite=None twin cookie the accounts endpoint reads (§ Accounts endpoint, Login Status API)", async () => {
    const { browser, response, user } = await signedInBrowser();
    expect(response.headers.get("set-login")).toBe("logged-in");
    const twin = response.headers.getSetCookie().find((line) => line.startsWith("fedcm_session="))!;
    expect(twin).toMatch(/; Path=\/auth\/v1\/fedcm/);
    expect(twin).toMatch(/; HttpOnly/);
    expect(twin).toMatch(/; Secure/);
    expect(twin).toMatch(/; SameSite=None/);
    // The pages' own cookie stays Lax: no cross-site request carries it.
    const lax = response.headers.getSetCookie().find((line) => line.startsWith("oauth2_session="))!;
    expect(lax).toMatch(/; SameSite=Lax/);

    const accounts = await svc.request("GET", "/fedcm/accounts", {
      headers: { cookie: fedcmCookie(browser), ...PROMPT },
    });
    expect(accounts.status).toBe(200);
    expect(await accounts.json()).toEqual({
      accounts: [
        {
          id: user.id,
          name: user.displayName || user.email,
          email: user.email,
          approved_clients: [],
          login_hints: [user.email],
          domain_hints: ["example.com"],
        },
      ],
    });
    // The page's script (no marker), the Lax cookie alone (what Chrome would send), nobody: no account shown.
    const script = await svc.request("GET", "/fedcm/accounts", { headers: { cookie: fedcmCookie(browser) } });
    expect(script.status).toBe(400);
    const laxOnly = await svc.request("GET", "/fedcm/accounts", {
      headers: { cookie: `oauth2_session=${browser.jar.get("oauth2_session")}`, ...PROMPT },
    });
    expect(laxOnly.status).toBe(401);
    expect(await laxOnly.json()).toEqual({ error: { code: "login_required" } });
  });

  it("shows a client's policy and terms only to a page of its registered origins (§ Extension: Client Metadata)", async () => {
    const client = await rpClient();
    const query = `/fedcm/client-metadata?client_id=${encodeURIComponent(client.clientId)}`;
    const shown = await svc.request("GET", query, { headers: { origin: RP, ...PROMPT } });
    expect(shown.status).toBe(200);
    expect(await shown.json()).toEqual({
      privacy_policy_url: `${RP}/privacy`,
      terms_of_service_url: `${RP}/terms`,
    });
    // Another origin, and an unknown client, read the same 404: whether the client exists stays unknown.
    const other = await svc.request("GET", query, { headers: { origin: OTHER_RP, ...PROMPT } });
    const unknown = await svc.request("GET", "/fedcm/client-metadata?client_id=nope", {
      headers: { origin: RP, ...PROMPT },
    });
    expect([other.status, unknown.status]).toEqual([404, 404]);
    expect(await other.json()).toEqual(await unknown.json());
  });

  it("answers the assertion with a code for the client, CORS for its exact origin, redeemed with PKCE at /oauth2/token for the right user (§ Identity assertion endpoint)", async () => {
    const { browser, user } = await signedInBrowser();
    const client = await rpClient();
    const cookie = fedcmCookie(browser);
    const ask = {
      client_id: client.clientId,
      account_id: user.id,
      params: await pkce({ nonce: "n-0S6_WzA2Mj" }),
      disclosure_text_shown: "true",
    };
    const answered = await assertion(cookie, RP, ask);
    expect(answered.status).toBe(200);
    // Chrome's CORS for the assertion: the exact caller, credentials allowed, never `*`.
    expect(answered.headers.get("access-control-allow-origin")).toBe(RP);
    expect(answered.headers.get("access-control-allow-credentials")).toBe("true");
    expect(answered.headers.get("cache-control")).toBe("no-store");
    const { token } = (await answered.json()) as { token: string };
    expect(token).toMatch(/^oac_/);

    // The code names no redirect URI: an exchange naming one, or without the verifier, burns it (RFC 6749 §4.1.3).
    const exchange = (code: string, extra: Record<string, string> = {}) =>
      postForm(svc, "/oauth2/token", {
        grant_type: "authorization_code",
        code,
        client_id: client.clientId,
        ...extra,
      });
    const tokens = await exchange(token, { code_verifier: VERIFIER });
    expect(tokens.status).toBe(200);
    const body = (await tokens.json()) as { access_token: string; id_token: string; scope: string };
    expect(body.scope).toBe("openid profile email");
    const idToken = decodeJwt(body.id_token);
    expect(idToken).toMatchObject({ sub: user.id, aud: client.clientId, nonce: "n-0S6_WzA2Mj", iss: ISSUER });
    expect(decodeJwt(body.access_token).sub).toBe(user.id);

    const second = (await (await assertion(cookie, RP, ask)).json()) as { token: string };
    await oauth2Error(await exchange(second.token), 400, "invalid_grant");
    const third = (await (await assertion(cookie, RP, ask)).json()) as { token: string };
    await oauth2Error(
      await exchange(third.token, { code_verifier: VERIFIER, redirect_uri: `${RP}/callback` }),
      400,
      "invalid_grant",
    );
    // Another client cannot redeem it.
    const another = await newClient(svc, { tokenEndpointAuthMethod: "none", fedcmOrigins: [RP] });
    const fourth = (await (await assertion(cookie, RP, ask)).json()) as { token: string };
    await oauth2Error(
      await postForm(svc, "/oauth2/token", {
        grant_type: "authorization_code",
        code: fourth.token,
        client_id: another.clientId,
        code_verifier: VERIFIER,
      }),
      400,
      "invalid_grant",
    );

    // Returning user: the client is approved now, and a prompt without disclosure is enough.
    const accounts = await svc.request("GET", "/fedcm/accounts", { headers: { cookie, ...PROMPT } });
    const [account] = ((await accounts.json()) as { accounts: { approved_clients: string[] }[] }).accounts;
    expect(account!.approved_clients).toContain(client.clientId);
    const returning = await assertion(cookie, RP, { ...ask, disclosure_text_shown: "false" });
    expect(returning.status).toBe(200);
  });

  it("refuses every other assertion: no marker, an unregistered origin or another client's, nobody signed in, another account, no PKCE, no disclosure", async () => {
    const { browser, user } = await signedInBrowser();
    const client = await rpClient();
    const cookie = fedcmCookie(browser);
    const ask = {
      client_id: client.clientId,
      account_id: user.id,
      params: await pkce(),
      disclosure_text_shown: "true",
    };
    const expectRefusal = async (response: Response, status: number, code: string, cors: boolean) => {
      expect({ status: response.status, body: await response.json() }).toEqual({
        status,
        body: { error: { code } },
      });
      expect(response.headers.get("access-control-allow-origin")).toBe(cors ? RP : null);
    };
    // A form posted by a page: no webidentity marker.
    await expectRefusal(await assertion(cookie, RP, ask, {} as typeof PROMPT), 400, "invalid_request", false);
    // An origin no client registered, and a client registered for another origin: the same answer, unreadable.
    const otherClient = await newClient(svc, { tokenEndpointAuthMethod: "none", fedcmOrigins: [OTHER_RP] });
    await expectRefusal(await assertion(cookie, OTHER_RP, ask), 400, "unauthorized_client", false);
    await expectRefusal(
      await assertion(cookie, RP, { ...ask, client_id: otherClient.clientId }),
      400,
      "unauthorized_client",
      false,
    );
    await expectRefusal(await assertion(cookie, "", ask), 400, "unauthorized_client", false);
    // Nobody signed in (no cookie, or the Lax one Chrome would not send).
    await expectRefusal(await assertion("", RP, ask), 401, "access_denied", true);
    // The browser named another account than the one signed in here.
    await expectRefusal(
      await assertion(cookie, RP, { ...ask, account_id: "someone-else" }),
      400,
      "invalid_request",
      true,
    );
    // A public client without PKCE; malformed params.
    await expectRefusal(await assertion(cookie, RP, { ...ask, params: "{}" }), 400, "invalid_request", true);
    await expectRefusal(
      await assertion(cookie, RP, { ...ask, params: "not json" }),
      400,
      "invalid_request",
      true,
    );
    await expectRefusal(
      await assertion(cookie, RP, { ...ask, params: JSON.stringify({ code_challenge: 42 }) }),
      400,
      "invalid_request",
      true,
    );
    // A first consent the browser did not disclose (spec: disclosure_text_shown is the IdP's assurance).
    await expectRefusal(
      await assertion(cookie, RP, { ...ask, disclosure_text_shown: "false" }),
      403,
      "access_denied",
      true,
    );
  });

  it("disconnects (the consent is forgotten) and signs out with Set-Login: logged-out (§ Disconnect endpoint)", async () => {
    const { browser, user } = await signedInBrowser();
    const client = await rpClient();
    const cookie = fedcmCookie(browser);
    const ask = {
      client_id: client.clientId,
      account_id: user.id,
      params: await pkce(),
      disclosure_text_shown: "true",
    };
    expect((await assertion(cookie, RP, ask)).status).toBe(200);

    const refused = await postForm(
      svc,
      "/fedcm/disconnect",
      { client_id: client.clientId, account_hint: user.email },
      { cookie, origin: OTHER_RP, ...PROMPT },
    );
    expect(refused.status).toBe(400);
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
    const disconnected = await postForm(
      svc,
      "/fedcm/disconnect",
      { client_id: client.clientId, account_hint: user.email },
      { cookie, origin: RP, ...PROMPT },
    );
    expect(disconnected.status).toBe(200);
    expect(disconnected.headers.get("access-control-allow-origin")).toBe(RP);
    expect(disconnected.headers.get("access-control-allow-credentials")).toBe("true");
    expect(await disconnected.json()).toEqual({ account_id: user.id });
    const accounts = await svc.request("GET", "/fedcm/accounts", { headers: { cookie, ...PROMPT } });
    expect(
      ((await accounts.json()) as { accounts: { approved_clients: string[] }[] }).accounts[0]!
        .approved_clients,
    ).toEqual([]);
    // Forgotten: a prompt without disclosure no longer does.
    const again = await assertion(cookie, RP, { ...ask, disclosure_text_shown: "false" });
    expect(again.status).toBe(403);

    const signedOut = await browser.post("/account/sign-out", {});
    expect(signedOut.headers.get("set-login")).toBe("logged-out");
    expect(signedOut.headers.getSetCookie().some((line) => /^fedcm_session=;.*Max-Age=0/.test(line))).toBe(
      true,
    );
    const after = await svc.request("GET", "/fedcm/accounts", { headers: { cookie, ...PROMPT } });
    expect(after.status).toBe(401);
  });

  it("shows no account to an impersonation and mints nothing for it (operators.md §1: it authorizes no client)", async () => {
    const { user } = await signUp(svc);
    const client = await rpClient();
    const answer = await svc.request("POST", `/admin/users/${user.id}/impersonate`, {
      headers: ADMIN,
      json: { reason: "ticket #78", actor: "ana@support" },
    });
    expect(answer.status).toBe(200);
    const browser = new Browser(svc);
    await browser.get(((await answer.json()) as { url: string }).url);
    expect(browser.jar.has("fedcm_session")).toBe(true);
    const cookie = fedcmCookie(browser);
    const accounts = await svc.request("GET", "/fedcm/accounts", { headers: { cookie, ...PROMPT } });
    expect(accounts.status).toBe(401);
    const ask = {
      client_id: client.clientId,
      account_id: user.id,
      params: await pkce(),
      disclosure_text_shown: "true",
    };
    expect((await assertion(cookie, RP, ask)).status).toBe(401);
  });

  it("answers a database fault with 503 in FedCM's shape, never a 500", async () => {
    const { browser, user } = await signedInBrowser();
    const client = await rpClient();
    const shard = userD1(user.id);
    const name = String(env.AUTH_D1_SHARDS ?? "DB")
      .split(",")
      .find((binding) => (env as unknown as Record<string, unknown>)[binding] === shard)!;
    // The session's read at the accounts endpoint; the code's insert at the assertion.
    const sessions = failingD1(shard, { match: /from "sessions"/ });
    const broken = provider({ [name]: sessions.binding });
    const cookie = fedcmCookie(browser);
    const accounts = await broken.request("GET", "/fedcm/accounts", { headers: { cookie, ...PROMPT } });
    expect({ status: accounts.status, body: await accounts.json() }).toEqual({
      status: 503,
      body: { error: { code: "server_error" } },
    });
    const ask = {
      client_id: client.clientId,
      account_id: user.id,
      params: await pkce(),
      disclosure_text_shown: "true",
    };
    const codes = failingD1(shard, { match: /insert into "oauth2_codes"/ });
    const codeBroken = provider({ [name]: codes.binding });
    const answered = await codeBroken.request("POST", "/fedcm/assertion", {
      body: new URLSearchParams(ask).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", cookie, origin: RP, ...PROMPT },
    });
    expect(answered.status).toBe(503);
    expect(answered.headers.get("access-control-allow-origin")).toBe(RP);
    expect(await answered.json()).toEqual({ error: { code: "server_error" } });
  });

  it("keeps fedcmOrigins in the admin API: origins alone, https or loopback http", async () => {
    const client = await rpClient();
    const read = await svc.request("GET", `/admin/oauth2/clients/${encodeURIComponent(client.clientId)}`, {
      headers: ADMIN,
    });
    expect(await read.json()).toMatchObject({
      fedcmOrigins: [RP, "http://localhost:5173"],
      policyUri: `${RP}/privacy`,
      tosUri: `${RP}/terms`,
    });
    for (const origin of [`${RP}/`, `${RP}/path`, "http://rp.example.com", "rp.example.com"]) {
      const bad = await svc.request("POST", "/admin/oauth2/clients", {
        headers: ADMIN,
        json: { clientName: "Bad", redirectUris: [`${RP}/cb`], fedcmOrigins: [origin] },
      });
      expect(bad.status, origin).toBe(400);
    }
  });
});
