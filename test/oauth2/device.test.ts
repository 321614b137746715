// The device authorization grant (RFC 8628, contract §3.6), the person's step on the built-in page through HTTP (the
// compatibility suite does it in Chromium). Threats: guessing user codes (counted per address, then refused even when
// right), a device code redeemed twice or by another client (one claim of the approved row), a device polling as fast as it
// can (`slow_down`), remote phishing with a code someone else started (the consent screen shows the code and is
// never skipped), forced approval from another site (the Origin check), and codes readable in the database.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { WireClient } from "../../src/oauth2/clients";
import type { DeviceAuthorizationResponse } from "../../src/oauth2/device";
import { decodeJwt, SERVER, signUp, uniqueEmail } from "../helpers";
import { failingShards } from "../support/faults";
import { Browser, ORIGIN, signIn } from "./page-browser";
import {
  authorize,
  basic,
  ISSUER,
  location,
  newClient,
  oauth2Error,
  postForm,
  provider,
  type TokenAnswer,
} from "./support";

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const svc = provider();

type DeviceAnswer = DeviceAuthorizationResponse;

const cli = (extra: Record<string, unknown> = {}) =>
  newClient(svc, {
    clientName: "Acme CLI",
    tokenEndpointAuthMethod: "none",
    grantTypes: [DEVICE_GRANT, "refresh_token"],
    redirectUris: [],
    ...extra,
  });

async function start(client: WireClient, scope = "openid offline_access"): Promise<DeviceAnswer> {
  const response = await postForm(svc, "/oauth2/device_authorization", { client_id: client.clientId, scope });
  expect(response.status).toBe(200);
  return (await response.json()) as DeviceAnswer;
}

const poll = (client: WireClient, deviceCode: string, through = svc) =>
  postForm(through, "/oauth2/token", {
    grant_type: DEVICE_GRANT,
    device_code: deviceCode,
    client_id: client.clientId,
  });

/** The person: opens the verification page, types the code, signs in; returns the consent page. */
async function enterCode(browser: Browser, userCode: string, email: string) {
  const entered = await browser.post("/oauth2/device", { user_code: userCode });
  expect(entered.status).toBe(303);
  const pageUrl = location(entered);
  const requestId = pageUrl.searchParams.get("request_id")!;
  await browser.get(pageUrl.toString());
  return { requestId, consent: await signIn(browser, requestId, email) };
}

const decide = (browser: Browser, requestId: string, decision: "allow" | "deny") =>
  browser.post("/oauth2/interaction/consent", { request_id: requestId, decision });

/** Moves the clock on by `seconds` (the poll interval is enforced on the server's clock). */
function later(seconds: number) {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Date.now() + seconds * 1000);
}

afterEach(() => {
  vi.useRealTimers();
});

describe("device authorization (RFC 8628)", () => {
  it("answers a device code and a user code the person can type", async () => {
    const client = await cli();
    const response = await postForm(svc, "/oauth2/device_authorization", { client_id: client.clientId });
    expect(response.headers.get("cache-control")).toBe("no-store");
    const answer = (await response.json()) as DeviceAnswer;
    expect(answer).toEqual({
      device_code: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/),
      verification_uri: `${ISSUER}/oauth2/device`,
      verification_uri_complete: `${ISSUER}/oauth2/device?user_code=${answer.user_code}`,
      expires_in: 600,
      interval: 5,
    });
    // Both codes are stored hashed.
    const row = await env.DB.prepare("SELECT * FROM device_authorizations WHERE client_id = ?")
      .bind(client.clientId)
      .first<Record<string, unknown>>();
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(answer.device_code);
    expect(stored).not.toContain(answer.user_code.replace("-", ""));
  });

  it("end to end: pending while the person signs in, tokens once approved, and never a second time", async () => {
    const client = await cli();
    const email = uniqueEmail();
    const { user } = await signUp(svc, email);
    const device = await start(client);
    await oauth2Error(await poll(client, device.device_code), 400, "authorization_pending");

    const browser = new Browser(svc);
    // verification_uri_complete shows the code filled in; the person still confirms it.
    const page = await browser.get(device.verification_uri_complete);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`value="${device.user_code}"`);
    // Typed in lower case and without the dash, as people do.
    const { requestId, consent } = await enterCode(
      browser,
      device.user_code.replace("-", "").toLowerCase(),
      email,
    );
    const html = await consent.text();
    expect(html).toContain("Acme CLI");
    expect(html).toContain(device.user_code);
    expect(html).toContain("Only allow this if you started it on your own device");
    later(6);
    await oauth2Error(await poll(client, device.device_code), 400, "authorization_pending");

    const approved = await decide(browser, requestId, "allow");
    expect(approved.status).toBe(200);
    expect(await approved.text()).toContain("Device connected");
    later(6);
    const tokens = await poll(client, device.device_code);
    expect(tokens.status).toBe(200);
    const answer = (await tokens.json()) as TokenAnswer;
    expect(answer).toMatchObject({
      refresh_token: expect.stringMatching(/^ort_/),
      id_token: expect.any(String),
    });
    expect(decodeJwt(answer.access_token).payload).toMatchObject({ sub: user.id, aud: client.clientId });
    later(6);
    await oauth2Error(await poll(client, device.device_code), 400, "invalid_grant");
    // The refresh token works like any other.
    const refreshed = await postForm(svc, "/oauth2/token", {
      grant_type: "refresh_token",
      refresh_token: answer.refresh_token!,
      client_id: client.clientId,
    });
    expect(refreshed.status).toBe(200);
  });

  it("a consent for a device is asked every time, even for a client the person allowed before", async () => {
    const client = await newClient(svc, {
      clientName: "Acme CLI",
      grantTypes: ["authorization_code", DEVICE_GRANT],
    });
    const email = uniqueEmail();
    await signUp(svc, email);
    const browser = new Browser(svc);
    // The person allows the client on the web first, which is remembered for the web flow.
    const web = await authorize(svc, client, { scope: "openid" });
    const webRequest = location(web).searchParams.get("request_id")!;
    await browser.get(location(web).toString());
    await signIn(browser, webRequest, email);
    expect((await decide(browser, webRequest, "allow")).status).toBe(303);
    // A device of that client, same scope: the code is still shown and asked about.
    const response = await postForm(svc, "/oauth2/device_authorization", { scope: "openid" }, basic(client));
    const device = (await response.json()) as DeviceAnswer;
    const entered = await browser.post("/oauth2/device", { user_code: device.user_code });
    const page = await browser.get(location(entered).toString());
    const html = await page.text();
    expect(html).toContain(device.user_code);
    expect(html).toContain('value="allow"');
  });

  it("denied: the device hears access_denied, once", async () => {
    const client = await cli();
    const email = uniqueEmail();
    await signUp(svc, email);
    const device = await start(client);
    const browser = new Browser(svc);
    const { requestId } = await enterCode(browser, device.user_code, email);
    const denied = await decide(browser, requestId, "deny");
    expect(await denied.text()).toContain("Request denied");
    await oauth2Error(await poll(client, device.device_code), 400, "access_denied");
    later(6);
    await oauth2Error(await poll(client, device.device_code), 400, "invalid_grant");
  });

  it("polling sooner than the interval gets slow_down, and the interval grows by five seconds each time", async () => {
    const client = await cli();
    const device = await start(client);
    await oauth2Error(await poll(client, device.device_code), 400, "authorization_pending");
    await oauth2Error(await poll(client, device.device_code), 400, "slow_down"); // interval now 10 s
    later(6);
    await oauth2Error(await poll(client, device.device_code), 400, "slow_down"); // 6 < 10: now 15 s
    later(16);
    await oauth2Error(await poll(client, device.device_code), 400, "authorization_pending");
  });

  it("an expired device code gets expired_token", async () => {
    const client = await cli();
    const device = await start(client);
    later(601);
    await oauth2Error(await poll(client, device.device_code), 400, "expired_token");
  });

  it("an approved device code is redeemed once, even by two polls racing, and never by another client", async () => {
    const client = await cli();
    const other = await cli();
    const email = uniqueEmail();
    await signUp(svc, email);
    const device = await start(client);
    const browser = new Browser(svc);
    const { requestId } = await enterCode(browser, device.user_code, email);
    await decide(browser, requestId, "allow");
    await oauth2Error(await poll(other, device.device_code), 400, "invalid_grant");
    later(6);
    const statuses = (
      await Promise.all([poll(client, device.device_code), poll(client, device.device_code)])
    ).map((r) => r.status);
    expect(statuses.sort()).toEqual([200, 400]);
  });

  // Threat: D1 fails once after the approved row was taken (the approver's read): the device heard 503 and its next
  // poll invalid_grant, so the person who approved on their phone had to start over (a new code typed, signed in and
  // approved again). The row is put back: the next poll redeems it, once.
  it("a fault after the approved code is taken: 503, then the next poll gets the tokens, then invalid_grant", async () => {
    const client = await cli();
    const email = uniqueEmail();
    const { user } = await signUp(svc, email);
    const device = await start(client);
    const browser = new Browser(svc);
    const { requestId } = await enterCode(browser, device.user_code, email);
    expect((await decide(browser, requestId, "allow")).status).toBe(200);
    const { bindings, fault } = failingShards(env, {
      match: /from "users" where "users"\."id" = \?/,
      times: 1,
    });
    const failing = provider(bindings);
    later(6);
    const first = await poll(client, device.device_code, failing);
    expect(first.status).toBe(503);
    expect(((await first.json()) as { error: string }).error).toBe("temporarily_unavailable");
    expect(fault.failures).toBe(1);
    later(6);
    const tokens = await poll(client, device.device_code, failing);
    expect(tokens.status).toBe(200);
    const answer = (await tokens.json()) as TokenAnswer;
    expect(decodeJwt(answer.access_token).payload).toMatchObject({ sub: user.id, aud: client.clientId });
    later(6);
    await oauth2Error(await poll(client, device.device_code, failing), 400, "invalid_grant");
  });

  it("refuses clients without the grant, scopes outside the client's, unknown resources and bad client auth", async () => {
    const webApp = await newClient(svc);
    await oauth2Error(
      await postForm(svc, "/oauth2/device_authorization", {}, basic(webApp)),
      400,
      "unauthorized_client",
    );
    const client = await cli({ scopes: ["openid"] });
    await oauth2Error(
      await postForm(svc, "/oauth2/device_authorization", {
        client_id: client.clientId,
        scope: "openid email",
      }),
      400,
      "invalid_scope",
    );
    await oauth2Error(
      await postForm(svc, "/oauth2/device_authorization", {
        client_id: client.clientId,
        resource: "https://elsewhere.example",
      }),
      400,
      "invalid_target",
    );
    const confidential = await cli({ tokenEndpointAuthMethod: "client_secret_basic" });
    await oauth2Error(
      await postForm(svc, "/oauth2/device_authorization", {}, basic(confidential, "ocs_wrong")),
      401,
      "invalid_client",
    );
    expect((await postForm(svc, "/oauth2/device_authorization", {}, basic(confidential))).status).toBe(200);
  });
});

describe("the device page", () => {
  it("says so when a code is wrong or expired, and refuses a form posted from another site", async () => {
    const browser = new Browser(svc);
    const wrong = await browser.post("/oauth2/device", { user_code: "BCDF-GHJK" });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain("That code is not right");
    const garbage = await browser.post("/oauth2/device", { user_code: "<script>" });
    expect(garbage.status).toBe(400);
    expect(await garbage.text()).not.toContain("<script>");
    const client = await cli();
    const device = await start(client);
    const crossSite = await browser.post(
      "/oauth2/device",
      { user_code: device.user_code },
      { origin: "https://attacker.example" },
    );
    expect(crossSite.status).toBe(403);
    later(601);
    const expired = await browser.post("/oauth2/device", { user_code: device.user_code });
    expect(expired.status).toBe(400);
  });

  it("serves a page no site can frame and no script runs on", async () => {
    const page = await new Browser(svc).get("/oauth2/device");
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("script-src");
    expect(csp).toContain("form-action 'self'");
  });

  // Eight letters from twenty are 2.6 × 10^10 codes; with ten guesses per five minutes per address, a guesser
  // would need centuries. Past the limit even the right code is refused, so the limit cannot be probed around.
  it("counts wrong codes per address, then refuses even a right one for a while", async () => {
    const limited = provider({
      AUTH_RATE_LIMIT_ENABLE: "true",
      AUTH_RATE_LIMIT_BRUTE_FORCE_BURST: "3",
    });
    const ip = { ...ORIGIN, "cf-connecting-ip": `198.51.100.${Math.floor(Math.random() * 250)}` };
    const browser = new Browser(limited);
    const client = await newClient(limited, {
      tokenEndpointAuthMethod: "none",
      grantTypes: [DEVICE_GRANT],
      redirectUris: [],
    });
    const device = (await (
      await postForm(limited, "/oauth2/device_authorization", { client_id: client.clientId })
    ).json()) as DeviceAnswer;
    const statuses = [];
    for (const code of ["BCDF-BCDF", "BCDF-BCDG", "BCDF-BCDH"]) {
      statuses.push((await browser.post("/oauth2/device", { user_code: code }, ip)).status);
    }
    const right = await browser.post("/oauth2/device", { user_code: device.user_code }, ip);
    statuses.push(right.status);
    expect(statuses).toEqual([400, 400, 400, 429]);
    expect(await right.text()).toContain("Too many wrong codes");
    // Another address is not affected.
    const elsewhere = await browser.post(
      "/oauth2/device",
      { user_code: device.user_code },
      { ...ORIGIN, "cf-connecting-ip": "203.0.113.77" },
    );
    expect(elsewhere.status).toBe(303);
  });

  it("with an external login UI, the code leads there and the UI completes the request with the person's token", async () => {
    const external = provider({ AUTH_OAUTH2_PROVIDER_LOGIN_URL: "https://login.example.com/oauth2" });
    const client = await newClient(external, {
      clientName: "Acme CLI",
      tokenEndpointAuthMethod: "none",
      grantTypes: [DEVICE_GRANT],
      redirectUris: [],
    });
    const device = (await (
      await postForm(external, "/oauth2/device_authorization", {
        client_id: client.clientId,
        scope: "openid",
      })
    ).json()) as DeviceAnswer;
    const entered = await new Browser(external).post("/oauth2/device", { user_code: device.user_code });
    const ui = location(entered);
    expect(ui.origin + ui.pathname).toBe("https://login.example.com/oauth2");
    const requestId = ui.searchParams.get("request_id")!;
    const described = await external.get(`/oauth2/login?request_id=${requestId}`);
    expect(await described.json()).toMatchObject({
      clientName: "Acme CLI",
      deviceUserCode: device.user_code,
    });
    const session = await signUp(external);
    const completed = await external.post("/oauth2/login", { requestId }, session.accessToken);
    expect(await completed.json()).toEqual({
      redirectUri: `${SERVER}/auth/v1/oauth2/device?result=approved`,
    });
    later(6);
    const tokens = await postForm(external, "/oauth2/token", {
      grant_type: DEVICE_GRANT,
      device_code: device.device_code,
      client_id: client.clientId,
    });
    expect(tokens.status).toBe(200);
  });
});
