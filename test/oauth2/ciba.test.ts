// OpenID CIBA Core 1.0, poll and ping (contract operators.md §2), through the real HTTP surface: the client's
// backchannel authentication request and polls, the user's mail, account center and approval page. Threats: user
// enumeration through the hint (an unknown one answers as a known one, limit included), a flood of requests on one
// user (AUTH_CIBA_MAX_PENDING_PER_USER), a binding message that lies about who speaks (control characters, markup:
// refused; shown quoted under a header naming the client), approval by opening a link (a mail scanner) or by another
// signed-in person, an auth_req_id redeemed twice or polled too fast, a request left pending that the user was never
// told of (the mail failing), SSRF through the notification endpoint, a client allowed CIBA by nobody.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { WireClient } from "../../src/oauth2/clients";
import { decodeJwt, mailbox, SERVER, signUp, uniqueAddress, uniqueEmail } from "../helpers";
import { failingEmail } from "../support/faults";
import { eventually, received, receiverUrl } from "../webhooks/support";
import { Browser, signIn } from "./page-browser";
import {
  ADMIN,
  basic,
  ISSUER,
  location,
  newClient,
  oauth2Error,
  postForm,
  provider,
  type TokenAnswer,
} from "./support";

const CIBA_GRANT = "urn:openid:params:grant-type:ciba";
const svc = provider();

const agent = (extra: Record<string, unknown> = {}) =>
  newClient(svc, {
    clientName: "Pay Agent",
    redirectUris: [],
    grantTypes: [CIBA_GRANT, "refresh_token"],
    backchannelTokenDeliveryMode: "poll",
    ...extra,
  });

interface CibaAnswer {
  auth_req_id: string;
  expires_in: number;
  interval: number;
}

const ask = (client: WireClient, values: Record<string, string | undefined>, service = svc) =>
  postForm(service, "/oauth2/bc-authorize", { scope: "openid", ...values }, basic(client));

async function asked(client: WireClient, values: Record<string, string | undefined>): Promise<CibaAnswer> {
  const response = await ask(client, values);
  expect(response.status, await response.clone().text()).toBe(200);
  expect(response.headers.get("cache-control")).toBe("no-store");
  return (await response.json()) as CibaAnswer;
}

const poll = (client: WireClient, authReqId: string) =>
  postForm(svc, "/oauth2/token", { grant_type: CIBA_GRANT, auth_req_id: authReqId }, basic(client));

/** Moves the clock on by `seconds` (the poll interval and expiry are the server's clock). */
function later(seconds: number) {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Date.now() + seconds * 1000);
}

afterEach(() => {
  vi.useRealTimers();
});

/** The approval link of the newest CIBA mail to `email`, as a path under the issuer. */
async function approvalLinkOf(email: string): Promise<{ path: string; text: string; subject: string }> {
  const [mail] = await mailbox(svc, email);
  const match = /(http\S+\/oauth2\/ciba\?request=[A-Za-z0-9_-]+)/.exec(mail?.text ?? "");
  if (!match || !mail) throw new Error(`no approval link in ${JSON.stringify(mail)}`);
  return { path: match[1]!.replace(ISSUER, ""), text: mail.text, subject: mail.subject };
}

/** Opens the approval link and signs in as `email`: the consent page (approve / deny). */
async function openApproval(browser: Browser, path: string, email: string) {
  const opened = await browser.get(path);
  expect(opened.status).toBe(303);
  const requestId = location(opened).searchParams.get("request_id")!;
  const page = browser.signedIn
    ? await browser.get(location(opened).toString())
    : await signIn(browser, requestId, email);
  return { requestId, page };
}

const decide = (browser: Browser, requestId: string, decision: "allow" | "deny") =>
  browser.post("/oauth2/interaction/consent", { request_id: requestId, decision });

describe("CIBA: discovery and the client's settings", () => {
  it("advertises the endpoint, both delivery modes and the grant", async () => {
    const metadata = (await (await svc.get("/.well-known/openid-configuration")).json()) as Record<
      string,
      unknown
    >;
    expect(metadata).toMatchObject({
      backchannel_authentication_endpoint: `${ISSUER}/oauth2/bc-authorize`,
      backchannel_token_delivery_modes_supported: ["poll", "ping"],
      backchannel_user_code_parameter_supported: false,
    });
    expect(metadata.grant_types_supported).toContain(CIBA_GRANT);
  });

  it("an admin allows it: the grant and the mode together, ping with an endpoint the outbound policy accepts", async () => {
    const refused = async (body: Record<string, unknown>) => {
      const response = await svc.request("POST", "/admin/oauth2/clients", {
        headers: ADMIN,
        json: { clientName: "x", redirectUris: [], ...body },
      });
      expect(response.status, JSON.stringify(body)).toBe(400);
    };
    await refused({ grantTypes: [CIBA_GRANT] });
    await refused({ grantTypes: ["refresh_token"], backchannelTokenDeliveryMode: "poll" });
    await refused({ grantTypes: [CIBA_GRANT], backchannelTokenDeliveryMode: "ping" });
    // SSRF: a private address is refused where it is set (and again at every ping).
    await refused({
      grantTypes: [CIBA_GRANT],
      backchannelTokenDeliveryMode: "ping",
      backchannelClientNotificationEndpoint: "https://10.0.0.1/ping",
    });
    await refused({
      grantTypes: [CIBA_GRANT],
      backchannelTokenDeliveryMode: "poll",
      tokenEndpointAuthMethod: "none",
    });
    const client = await agent({ backchannelOrganization: null });
    expect(client).toMatchObject({
      backchannelTokenDeliveryMode: "poll",
      backchannelClientNotificationEndpoint: null,
    });
    // Registration cannot give itself CIBA: an admin allows it.
    const registered = await provider({ AUTH_OAUTH2_PROVIDER_REGISTRATION: "open" }).post(
      "/oauth2/register",
      {
        client_name: "self-made",
        grant_types: [CIBA_GRANT],
        redirect_uris: [],
      },
    );
    expect(registered.status).toBe(400);
  });
});

describe("CIBA poll mode, end to end", () => {
  it("pending, slow_down, the mail in the user's language, approval on the page, tokens once", async () => {
    const client = await agent();
    const email = uniqueEmail("ciba");
    const { user } = await signUp(svc, email, { locale: "fr" });
    const answer = await asked(client, { login_hint: email, binding_message: "Pay invoice #42: 120 EUR" });
    expect(answer).toEqual({
      auth_req_id: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      expires_in: 300,
      interval: 5,
    });
    await oauth2Error(await poll(client, answer.auth_req_id), 400, "authorization_pending");
    // CIBA §11: sooner than the interval, slow_down (and the interval grows).
    await oauth2Error(await poll(client, answer.auth_req_id), 400, "slow_down");

    // The mail: French, the client named, its message quoted.
    const mail = await approvalLinkOf(email);
    expect(mail.subject).toBe("Pay Agent demande votre accord");
    expect(mail.text).toContain("Message de Pay Agent : “Pay invoice #42: 120 EUR”");

    // The account center lists it, with the same link.
    const browser = new Browser(svc);
    const { requestId, page } = await openApproval(browser, mail.path, email);
    const account = await browser.get("/account");
    const center = await account.text();
    expect(center).toContain("En attente de votre accord");
    expect(center).toContain("“Pay invoice #42: 120 EUR”");
    expect(center).toContain(mail.path.split("?")[1]);

    // Opening the link and signing in approved nothing (a mail scanner follows links).
    later(11);
    await oauth2Error(await poll(client, answer.auth_req_id), 400, "authorization_pending");

    // The consent page: the fixed header names the client, the message is quoted, no organization picker.
    const html = await page.text();
    expect(html).toContain(
      "<figcaption>Message de Pay Agent</figcaption><blockquote>“Pay invoice #42: 120 EUR”</blockquote>",
    );
    expect(html).not.toContain('name="organization"');
    const approved = await decide(browser, requestId, "allow");
    expect(approved.status).toBe(200);
    expect(await approved.text()).toContain("Demande approuvée");
    // Gone from the account center once decided.
    expect(await (await browser.get("/account")).text()).not.toContain("Pay invoice #42");

    later(30);
    const tokens = await poll(client, answer.auth_req_id);
    expect(tokens.status).toBe(200);
    const body = (await tokens.json()) as TokenAnswer;
    expect(decodeJwt(body.id_token!).payload).toMatchObject({
      sub: user.id,
      aud: client.clientId,
      amr: ["pwd"],
    });
    expect(decodeJwt(body.access_token).payload).toMatchObject({ sub: user.id, client_id: client.clientId });
    expect(body.refresh_token).toBeDefined();
    // Single use: the second poll finds nothing.
    later(60);
    await oauth2Error(await poll(client, answer.auth_req_id), 400, "invalid_grant");
    // Another client's poll of the same id finds nothing either (checked on a fresh request).
    const other = await agent();
    const second = await asked(client, { login_hint: user.id });
    await oauth2Error(await poll(other, second.auth_req_id), 400, "invalid_grant");
    // The device grant cannot redeem it under its own name.
    const asDevice = await postForm(
      svc,
      "/oauth2/token",
      { grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: second.auth_req_id },
      basic(client),
    );
    expect(asDevice.status).toBe(400);
  });

  it("a denial answers access_denied; an expired request expired_token", async () => {
    const client = await agent();
    const email = uniqueEmail("ciba");
    await signUp(svc, email);
    const denied = await asked(client, { login_hint: email });
    const browser = new Browser(svc);
    const { requestId } = await openApproval(browser, (await approvalLinkOf(email)).path, email);
    const page = await decide(browser, requestId, "deny");
    expect(await page.text()).toContain("Request denied");
    await oauth2Error(await poll(client, denied.auth_req_id), 400, "access_denied");

    const short = await asked(client, { login_hint: email, requested_expiry: "10" });
    expect(short.expires_in).toBe(10);
    later(11);
    await oauth2Error(await poll(client, short.auth_req_id), 400, "expired_token");
  });

  it("only the user asked may decide: another signed-in person is told so, and their post decides nothing", async () => {
    const client = await agent();
    const email = uniqueEmail("ciba");
    await signUp(svc, email);
    const intruder = uniqueEmail("intruder");
    await signUp(svc, intruder);
    const answer = await asked(client, { login_hint: email, binding_message: "Wire 5000 EUR" });
    const browser = new Browser(svc);
    const opened = await browser.get((await approvalLinkOf(email)).path);
    const requestId = location(opened).searchParams.get("request_id")!;
    const page = await signIn(browser, requestId, intruder);
    expect(page.status).toBe(403);
    const html = await page.text();
    expect(html).toContain("This request is for another account");
    expect(html).not.toContain("Wire 5000 EUR");
    expect((await decide(browser, requestId, "allow")).status).toBe(403);
    expect((await decide(browser, requestId, "deny")).status).toBe(403);
    later(6);
    await oauth2Error(await poll(client, answer.auth_req_id), 400, "authorization_pending");
  });

  it("acr_values asks a step-up before the approval is shown", async () => {
    const client = await agent();
    const email = uniqueEmail("ciba");
    await signUp(svc, email);
    await asked(client, {
      login_hint: email,
      acr_values: "urn:edge-auth:acr:phr",
      binding_message: "Step up",
    });
    const browser = new Browser(svc);
    const { page } = await openApproval(browser, (await approvalLinkOf(email)).path, email);
    const html = await page.text();
    // A password sign-in does not reach a phishing-resistant level: no Approve button yet.
    expect(html).not.toContain('value="allow"');
    expect(html).not.toContain("Step up");
  });
});

describe("CIBA: no enumeration, limits and bad input", () => {
  it("an unknown hint answers as a known one, and is limited alike (AUTH_CIBA_MAX_PENDING_PER_USER)", async () => {
    const client = await agent();
    const email = uniqueEmail("ciba");
    await signUp(svc, email);
    const nobody = uniqueEmail("nobody");
    for (const hint of [email, nobody]) {
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await asked(client, { login_hint: hint }));
      for (const answer of answers)
        expect(Object.keys(answer).sort()).toEqual(["auth_req_id", "expires_in", "interval"]);
      await oauth2Error(await poll(client, answers[0]!.auth_req_id), 400, "authorization_pending");
      // The fourth waits on the same person (or non-person): refused the same way.
      await oauth2Error(await ask(client, { login_hint: hint }), 403, "access_denied");
    }
    expect(await mailbox(svc, nobody)).toEqual([]);
    expect((await mailbox(svc, email)).length).toBe(3);
  });

  it("the client's own rate bucket counts it from every address (one client cannot flood mailboxes)", async () => {
    const client = await agent();
    const limited = provider({ AUTH_RATE_LIMIT_ENABLE: "true", AUTH_RATE_LIMIT_OAUTH2_BURST: "2" });
    const from = (ip: string) =>
      postForm(
        limited,
        "/oauth2/bc-authorize",
        { scope: "openid", login_hint: uniqueEmail("nobody") },
        { ...basic(client), "cf-connecting-ip": ip },
      );
    expect((await from(uniqueAddress())).status).toBe(200);
    expect((await from(uniqueAddress())).status).toBe(200);
    // A third address, the same client: over its bucket.
    expect((await from(uniqueAddress())).status).toBe(429);
  });

  it("refuses bad input with CIBA's errors", async () => {
    const client = await agent();
    const email = uniqueEmail("ciba");
    await signUp(svc, email);
    const bad = async (values: Record<string, string | undefined>, error: string, status = 400) =>
      oauth2Error(await ask(client, { login_hint: email, ...values }), status, error);
    await bad({ binding_message: "x".repeat(65) }, "invalid_binding_message");
    await bad({ binding_message: "Pay\u0007now" }, "invalid_binding_message");
    await bad({ binding_message: "Pay \u202Eexe.png" }, "invalid_binding_message");
    await bad({ binding_message: "<b>Pay</b>" }, "invalid_binding_message");
    await bad({ binding_message: "line\nbreak" }, "invalid_binding_message");
    await bad({ scope: "profile" }, "invalid_scope");
    await bad({ scope: "openid authzen" }, "invalid_scope");
    await bad({ id_token_hint: "not.a.token" }, "invalid_request");
    await bad({ login_hint: undefined }, "invalid_request");
    await bad({ login_hint_token: "x" }, "invalid_request");
    await bad({ requested_expiry: "5" }, "invalid_request");
    await bad({ requested_expiry: "1e3" }, "invalid_request");
    await bad({ request: "eyJ.x.y" }, "invalid_request");
    // A client no admin allowed CIBA.
    const plain = await newClient(svc, { clientName: "plain" });
    await oauth2Error(await ask(plain, { login_hint: email }), 400, "unauthorized_client");
    // A wrong secret.
    await oauth2Error(
      await ask({ ...client, clientSecret: "wrong" }, { login_hint: email }),
      401,
      "invalid_client",
    );
    // A unicode message within the rules is shown as sent.
    await asked(client, { login_hint: email, binding_message: "Zahlung: 12,50 € an Müller (Nr. 7)" });
  });

  it("an organization's client asks only its members: others are answered alike and never mailed", async () => {
    const owner = await signUp(svc, uniqueEmail("owner"));
    const created = await svc.request("POST", "/orgs", {
      headers: { authorization: `Bearer ${owner.accessToken}` },
      json: { name: "Acme", slug: `acme-${crypto.randomUUID().slice(0, 8)}` },
    });
    expect(created.status).toBe(201);
    const org = (await created.json()) as { id: string };
    const client = await agent({ backchannelOrganization: org.id });
    const outsider = uniqueEmail("outsider");
    await signUp(svc, outsider);
    await asked(client, { login_hint: outsider });
    expect(await mailbox(svc, outsider)).toEqual([]);
    await asked(client, { login_hint: owner.user.email });
    const mail = await approvalLinkOf(owner.user.email);
    const browser = new Browser(svc);
    const { requestId } = await openApproval(browser, mail.path, owner.user.email);
    expect((await decide(browser, requestId, "allow")).status).toBe(200);
  });

  it("an id_token_hint must be an ID token issued to the asking client", async () => {
    const client = await agent();
    const email = uniqueEmail("ciba");
    await signUp(svc, email);
    const first = await asked(client, { login_hint: email });
    const browser = new Browser(svc);
    const { requestId } = await openApproval(browser, (await approvalLinkOf(email)).path, email);
    await decide(browser, requestId, "allow");
    later(6);
    const idToken = ((await (await poll(client, first.auth_req_id)).json()) as TokenAnswer).id_token!;
    expect(idToken).toBeDefined();
    // Its own ID token names the user again; another client's use of it is refused.
    await asked(client, { id_token_hint: idToken });
    const other = await agent();
    await oauth2Error(await ask(other, { id_token_hint: idToken }), 400, "invalid_request");
  });
});

describe("CIBA faults and ping mode", () => {
  it("the mail failing: 503, and nothing is left pending", async () => {
    const client = await agent();
    const email = uniqueEmail("ciba");
    await signUp(svc, email);
    const { binding } = failingEmail(env.CF_EMAIL, { times: 1 });
    const failing = provider({
      AUTH_DEV_MAILBOX: "false",
      EMAIL: binding,
      AUTH_SMTP_SENDER: "noreply@example.com",
    });
    const response = await ask(client, { login_hint: email }, failing);
    expect(response.status).toBe(503);
    expect((await response.json()) as { error: string }).toMatchObject({ error: "temporarily_unavailable" });
    const left = await env.DB.prepare("SELECT count(*) AS n FROM device_authorizations WHERE client_id = ?")
      .bind(client.clientId)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
  });

  it("ping: once approved, the client's endpoint is posted its auth_req_id with its bearer token", async () => {
    const receiver = receiverUrl("ciba-ping");
    const client = await agent({
      backchannelTokenDeliveryMode: "ping",
      backchannelClientNotificationEndpoint: receiver,
    });
    const email = uniqueEmail("ciba");
    await signUp(svc, email);
    await oauth2Error(await ask(client, { login_hint: email }), 400, "invalid_request");
    const token = `note-${crypto.randomUUID()}`;
    const answer = await asked(client, { login_hint: email, client_notification_token: token });
    const browser = new Browser(svc);
    const { requestId } = await openApproval(browser, (await approvalLinkOf(email)).path, email);
    await decide(browser, requestId, "allow");
    const [ping] = await eventually(
      () => received(receiver),
      (posts) => posts.length > 0,
    );
    expect(ping!.headers.authorization).toBe(`Bearer ${token}`);
    expect(JSON.parse(ping!.body)).toEqual({ auth_req_id: answer.auth_req_id });
    // Nothing in the database holds the auth_req_id or the token in the clear.
    const row = await env.DB.prepare("SELECT * FROM device_authorizations WHERE client_id = ?")
      .bind(client.clientId)
      .first<Record<string, unknown>>();
    expect(JSON.stringify(row)).not.toContain(answer.auth_req_id);
    expect(JSON.stringify(row)).not.toContain(token);
    const tokens = await poll(client, answer.auth_req_id);
    expect(tokens.status).toBe(200);
  });
});

describe("CIBA in the console", () => {
  const BASE = "/admin/console";
  const origin = new URL(SERVER).origin;
  const consolePost = (path: string, values: Record<string, string>, cookie: string) =>
    svc.request("POST", `${BASE}${path}`, {
      body: new URLSearchParams(values).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin, cookie },
    });

  it("an admin allows a client CIBA (ping, its endpoint under the outbound policy), and the edit form keeps it", async () => {
    const login = await consolePost("/login", { secret: String(env.AUTH_ADMIN_SECRET) }, "");
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const detailType = {
      type: `console_${crypto.randomUUID().slice(0, 8)}`,
      schema: { type: "object", properties: { amount: { type: "string" } } },
      template: { en: "Pay {{amount}}" },
    };
    const client = await newClient(svc, {
      clientName: "Console Agent",
      authorizationDetailsTypes: [detailType],
    });
    const path = `/clients/${encodeURIComponent(client.clientId)}`;
    const page = await (await svc.request("GET", `${BASE}${path}`, { headers: { cookie } })).text();
    expect(page).toContain("Approval on a second device (CIBA)");
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
    // SSRF: a private address is refused, the client unchanged.
    const refused = await consolePost(
      `${path}/ciba`,
      { csrf, mode: "ping", endpoint: "https://192.168.1.2/x" },
      cookie,
    );
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("backchannelClientNotificationEndpoint");
    const receiver = receiverUrl("console-ping");
    const saved = await consolePost(`${path}/ciba`, { csrf, mode: "ping", endpoint: receiver }, cookie);
    expect(saved.status).toBe(303);
    const api = async () =>
      (await (
        await svc.request("GET", `/admin/oauth2/clients/${client.clientId}`, { headers: ADMIN })
      ).json()) as WireClient;
    expect(await api()).toMatchObject({
      grantTypes: expect.arrayContaining([CIBA_GRANT, "authorization_code"]),
      backchannelTokenDeliveryMode: "ping",
      backchannelClientNotificationEndpoint: receiver,
      redirectUris: client.redirectUris,
      // Every other setting stays, the client's authorization details types too.
      authorizationDetailsTypes: [expect.objectContaining({ type: detailType.type })],
    });
    // The general edit form does not show CIBA's settings, and keeps them.
    const edited = await consolePost(
      `${path}/edit`,
      { csrf, clientName: "Console Agent 2", redirectUris: client.redirectUris.join("\n"), scopes: "openid" },
      cookie,
    );
    expect(edited.status).toBe(303);
    expect(await api()).toMatchObject({
      clientName: "Console Agent 2",
      backchannelTokenDeliveryMode: "ping",
    });
    // Off again: the grant goes with the mode.
    expect((await consolePost(`${path}/ciba`, { csrf, mode: "off" }, cookie)).status).toBe(303);
    const off = await api();
    expect(off.backchannelTokenDeliveryMode).toBeNull();
    expect(off.grantTypes).not.toContain(CIBA_GRANT);
  });
});

describe("CIBA with rich authorization requests (RFC 9396)", () => {
  const TYPE = `payment_initiation_${crypto.randomUUID().slice(0, 8)}`;
  const PAYMENT_TYPE = {
    type: TYPE,
    schema: {
      type: "object",
      required: ["instructedAmount", "creditorName"],
      additionalProperties: false,
      properties: {
        instructedAmount: {
          type: "object",
          required: ["currency", "amount"],
          properties: { currency: { enum: ["EUR", "USD"] }, amount: { type: "string", maxLength: 20 } },
        },
        creditorName: { type: "string", maxLength: 140 },
      },
    },
    template: { en: "Pay {{instructedAmount.amount}} {{instructedAmount.currency}} to {{creditorName}}" },
  };
  const PAY = {
    type: TYPE,
    instructedAmount: { currency: "EUR", amount: "123.50" },
    creditorName: "Merchant <b>A</b>",
  };

  it("what the client asks is checked, shown on the approval page, and exactly what the tokens carry", async () => {
    const client = await agent({ authorizationDetailsTypes: [PAYMENT_TYPE] });
    const email = uniqueEmail("ciba-rar");
    await signUp(svc, email);
    // A type the client may not use, or fields outside its schema: refused before anything is stored or mailed.
    await oauth2Error(
      await ask(client, {
        login_hint: email,
        authorization_details: JSON.stringify([{ ...PAY, type: "other" }]),
      }),
      400,
      "invalid_authorization_details",
    );
    await oauth2Error(
      await ask(client, { login_hint: email, authorization_details: JSON.stringify([{ ...PAY, extra: 1 }]) }),
      400,
      "invalid_authorization_details",
    );
    expect(await mailbox(svc, email)).toEqual([]);
    const answer = await asked(client, {
      login_hint: email,
      binding_message: "Invoice 7",
      authorization_details: JSON.stringify([PAY]),
    });
    const browser = new Browser(svc);
    const { requestId, page } = await openApproval(browser, (await approvalLinkOf(email)).path, email);
    const html = await page.text();
    // The admin's template, the client's values escaped (its markup is text).
    expect(html).toContain(
      "Pay <strong>123.50</strong> <strong>EUR</strong> to <strong>Merchant &lt;b&gt;A&lt;/b&gt;</strong>",
    );
    expect(html).toContain("“Invoice 7”");
    await decide(browser, requestId, "allow");
    later(6);
    // Asking for more at the token endpoint than was approved: refused, and the approval is spent.
    const wider = await postForm(
      svc,
      "/oauth2/token",
      {
        grant_type: CIBA_GRANT,
        auth_req_id: answer.auth_req_id,
        authorization_details: JSON.stringify([
          { ...PAY, instructedAmount: { currency: "EUR", amount: "999" } },
        ]),
      },
      basic(client),
    );
    await oauth2Error(wider, 400, "invalid_authorization_details");

    const second = await asked(client, { login_hint: email, authorization_details: JSON.stringify([PAY]) });
    const link = (await mailbox(svc, email))[0]!.text.match(/\/oauth2\/ciba\?request=[A-Za-z0-9_-]+/)![0];
    const again = await openApproval(browser, link, email);
    await decide(browser, again.requestId, "allow");
    later(12);
    const tokens = (await (await poll(client, second.auth_req_id)).json()) as TokenAnswer & {
      authorization_details?: unknown;
    };
    expect(tokens.authorization_details).toEqual([PAY]);
    expect(decodeJwt(tokens.access_token).payload.authorization_details).toEqual([PAY]);
  });
});
