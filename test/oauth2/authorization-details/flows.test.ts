// RFC 9396 rich authorization requests through the real HTTP surface: the admin sets a client's types (schema and
// template), discovery lists them, authorize and PAR check what a client asks, the consent page shows it (escaped,
// always asked), and what was approved is in the code's grant, the access token, the token answer and introspection;
// a token request or a refresh may ask for fewer, never more.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { WireClient } from "../../../src/oauth2/clients";
import { decodeJwt, expectError, SERVER, signUp } from "../../helpers";
import { Browser, signIn } from "../page-browser";
import {
  ADMIN,
  authorize,
  basic,
  codeFor,
  exchange,
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

const svc = provider();
/** A type name unique to this file's run: discovery lists every client's, other files' too. */
const TYPE = `payment_initiation_${crypto.randomUUID().slice(0, 8)}`;
const PAYMENT_TYPE = {
  type: TYPE,
  schema: {
    type: "object",
    required: ["instructedAmount", "creditorName"],
    additionalProperties: false,
    properties: {
      actions: { type: "array", items: { enum: ["initiate", "status", "cancel"] } },
      instructedAmount: {
        type: "object",
        required: ["currency", "amount"],
        properties: { currency: { enum: ["EUR", "USD"] }, amount: { type: "string", maxLength: 20 } },
      },
      creditorName: { type: "string", maxLength: 140 },
    },
  },
  template: {
    en: "Pay {{instructedAmount.amount}} {{instructedAmount.currency}} to {{creditorName}}",
    de: "{{instructedAmount.amount}} {{instructedAmount.currency}} an {{creditorName}} zahlen",
  },
};
const PAY = {
  type: TYPE,
  actions: ["initiate", "status"],
  instructedAmount: { currency: "EUR", amount: "123.50" },
  creditorName: "Merchant <b>A</b>",
};
const details = (...items: unknown[]) => JSON.stringify(items);

function payingClient(extra: Record<string, unknown> = {}): Promise<WireClient> {
  return newClient(svc, {
    grantTypes: ["authorization_code", "refresh_token", "client_credentials"],
    authorizationDetailsTypes: [PAYMENT_TYPE],
    ...extra,
  });
}

const pkce = async () => ({ code_challenge: await s256(VERIFIER), code_challenge_method: "S256" });

/** Through the external login UI's completion (it asks consent itself): the code for `params`. */
async function tokensWith(
  client: WireClient,
  params: Record<string, string>,
  extra: Record<string, string> = {},
) {
  const session = await signUp(svc);
  const { code } = await codeFor(svc, client, session, {
    scope: "openid offline_access",
    ...(await pkce()),
    ...params,
  });
  return exchange(svc, client, code, { code_verifier: VERIFIER, ...extra });
}

const introspect = (client: WireClient, token: string) =>
  postForm(svc, "/oauth2/introspect", { token }, basic(client));
const refresh = (client: WireClient, token: string, extra: Record<string, string> = {}) =>
  postForm(
    svc,
    "/oauth2/token",
    { grant_type: "refresh_token", refresh_token: token, ...extra },
    basic(client),
  );

describe("authorization details types on the client (admin API) and in discovery", () => {
  it("keeps a client's types, lists them in discovery, and refuses bad schemas and templates when set", async () => {
    const client = await payingClient();
    expect(client.authorizationDetailsTypes).toEqual([PAYMENT_TYPE]);
    const read = (await (
      await svc.request("GET", `/admin/oauth2/clients/${client.clientId}`, { headers: ADMIN })
    ).json()) as WireClient;
    expect(read.authorizationDetailsTypes).toEqual([PAYMENT_TYPE]);
    // RFC 9396 §10.1, read right after the write (this isolate forgets its memo on every client change).
    const discovery = (await (await svc.request("GET", "/.well-known/openid-configuration")).json()) as {
      authorization_details_types_supported: string[];
    };
    expect(discovery.authorization_details_types_supported).toContain(TYPE);

    // Threat: an admin schema that refers elsewhere, runs a regular expression, or is not JSON Schema at all,
    // discovered only when a client's request meets it (or never: an unknown keyword silently checks nothing).
    for (const [types, message] of [
      [
        [{ ...PAYMENT_TYPE, schema: { type: "object", $ref: "https://x.example/s" } }],
        /\$ref, which is not supported/,
      ],
      [
        [{ ...PAYMENT_TYPE, schema: { type: "object", properties: { a: { pattern: "(a+)+$" } } } }],
        /pattern/,
      ],
      [[{ ...PAYMENT_TYPE, schema: { type: "objekt" } }], /schema\.type/],
      [[{ ...PAYMENT_TYPE, template: "Pay {{ amount" }], /placeholder/],
      [[PAYMENT_TYPE, PAYMENT_TYPE], /once/],
      ["not a list", /authorizationDetailsTypes/],
    ] as const) {
      const response = await svc.request("POST", "/admin/oauth2/clients", {
        headers: ADMIN,
        json: { clientName: "Bad", redirectUris: [REDIRECT_URI], authorizationDetailsTypes: types },
      });
      expect((await expectError(response, 400, "invalid-request")).message).toMatch(message);
    }
  });
});

describe("authorization details at the authorization endpoint and PAR (RFC 9396 §2, §5)", () => {
  // Threat: a client asking for a kind of access the admin never allowed it, or for fields its type does not define.
  it("sends the client back with invalid_authorization_details (and its state) for what it may not ask", async () => {
    const client = await payingClient();
    const plain = await newClient(svc);
    const cases: [WireClient, string][] = [
      [client, details({ ...PAY, type: "account_information" })],
      [client, details({ ...PAY, instructedAmount: { currency: "GBP", amount: "1" } })],
      [client, details({ ...PAY, extra: "field" })],
      [client, "{not json"],
      [client, details()],
      [client, JSON.stringify(PAY)],
      [plain, details(PAY)],
    ];
    for (const [who, value] of cases) {
      const back = location(await authorize(svc, who, { authorization_details: value, ...(await pkce()) }));
      expect(back.origin + back.pathname).toBe(REDIRECT_URI);
      expect({ error: back.searchParams.get("error"), state: back.searchParams.get("state") }, value).toEqual(
        { error: "invalid_authorization_details", state: "st-1" },
      );
    }
    // PAR answers the same error as JSON (RFC 9126 §2.3), nothing stored.
    const pushed = await postForm(
      svc,
      "/oauth2/par",
      {
        response_type: "code",
        redirect_uri: REDIRECT_URI,
        scope: "openid",
        ...(await pkce()),
        authorization_details: details({ ...PAY, type: "account_information" }),
      },
      basic(client),
    );
    await oauth2Error(pushed, 400, "invalid_authorization_details");
    // The device flow's page shows no details: asking for some there is refused, not dropped unseen.
    const device = await newClient(svc, {
      grantTypes: ["urn:ietf:params:oauth:grant-type:device_code"],
      authorizationDetailsTypes: [PAYMENT_TYPE],
    });
    const deviceAsked = await postForm(
      svc,
      "/oauth2/device_authorization",
      { scope: "openid", authorization_details: details(PAY) },
      basic(device),
    );
    await oauth2Error(deviceAsked, 400, "invalid_authorization_details");
  });

  it("tells an external login UI what to show (GET /oauth2/login), with the client's types", async () => {
    const client = await payingClient();
    const requestId = await requestIdOf(
      await authorize(svc, client, { authorization_details: details(PAY), ...(await pkce()) }),
    );
    const described = (await (
      await svc.request("GET", `/oauth2/login?request_id=${requestId}`)
    ).json()) as Record<string, unknown>;
    expect(described).toMatchObject({
      authorizationDetails: [PAY],
      authorizationDetailsTypes: [PAYMENT_TYPE],
    });
  });

  it("shows them on the consent page from the type's template, escaped, every time, in the person's language", async () => {
    const client = await payingClient();
    const { user } = await signUp(svc);
    const browser = new Browser(svc);
    // First a request without details, allowed: the scopes are remembered.
    const first = await requestIdOf(await authorize(svc, client, { scope: "openid", ...(await pkce()) }));
    await browser.get(`/oauth2/interaction?request_id=${first}`);
    await signIn(browser, first, user.email);
    const allowed = await browser.post("/oauth2/interaction/consent", {
      request_id: first,
      decision: "allow",
    });
    expect(location(allowed).searchParams.get("code")).toMatch(/^oac_/);

    // The same scopes with details: asked again (details are this request's), and shown.
    const authorized = await authorize(svc, client, {
      scope: "openid",
      ui_locales: "de",
      authorization_details: details(PAY),
      ...(await pkce()),
    });
    const second = await requestIdOf(authorized);
    const page = await browser.get(`/oauth2/interaction?request_id=${second}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Im Einzelnen bittet sie darum:");
    expect(html).toContain(
      "<strong>123.50</strong> <strong>EUR</strong> an <strong>Merchant &lt;b&gt;A&lt;/b&gt;</strong> zahlen",
    );
    // Threat: markup from the client's request on the page; a granted field hidden by the template.
    expect(html).not.toContain("<b>A</b>");
    expect(html).toContain("<dt>actions</dt><dd>initiate, status</dd>");
    // prompt=none cannot approve them silently (OIDC Core §3.1.2.6).
    const silent = location(
      await browser.get(
        `/oauth2/authorize?${new URLSearchParams({
          client_id: client.clientId,
          redirect_uri: REDIRECT_URI,
          response_type: "code",
          scope: "openid",
          prompt: "none",
          state: "s",
          authorization_details: details(PAY),
          ...(await pkce()),
        })}`,
      ),
    );
    expect(silent.searchParams.get("error")).toBe("consent_required");
    // Allowed on the page: the code's tokens carry exactly what was shown.
    const code = location(
      await browser.post("/oauth2/interaction/consent", { request_id: second, decision: "allow" }),
    ).searchParams.get("code")!;
    const tokens = (await (await exchange(svc, client, code, { code_verifier: VERIFIER })).json()) as {
      authorization_details: unknown;
      access_token: string;
    };
    expect(tokens.authorization_details).toEqual([PAY]);
    expect(decodeJwt(tokens.access_token).payload.authorization_details).toEqual([PAY]);
  });
});

describe("authorization details at the token endpoint (RFC 9396 §6, §7, §9)", () => {
  it("puts what was approved in the access token, the answer, introspection and the grant; narrower on request", async () => {
    const client = await payingClient();
    const second = { type: TYPE, instructedAmount: { currency: "USD", amount: "5" }, creditorName: "B" };
    const response = await tokensWith(client, { authorization_details: details(PAY, second) });
    expect(response.status).toBe(200);
    const tokens = (await response.json()) as {
      access_token: string;
      refresh_token: string;
      authorization_details: unknown;
    };
    expect(tokens.authorization_details).toEqual([PAY, second]);
    expect(decodeJwt(tokens.access_token).payload.authorization_details).toEqual([PAY, second]);
    const access = (await (await introspect(client, tokens.access_token)).json()) as Record<string, unknown>;
    expect(access).toMatchObject({ active: true, authorization_details: [PAY, second] });
    const grant = (await (await introspect(client, tokens.refresh_token)).json()) as Record<string, unknown>;
    expect(grant).toMatchObject({
      active: true,
      token_type: "refresh_token",
      authorization_details: [PAY, second],
    });

    // Threat: a refresh that widens what the user approved (a larger amount, another action, a new detail). Refused
    // before the refresh token is spent.
    for (const wider of [
      details({ ...PAY, instructedAmount: { currency: "EUR", amount: "9999.00" } }),
      details({ ...PAY, actions: ["initiate", "status", "cancel"] }),
      details(PAY, second, { ...second, creditorName: "C" }),
      details({ ...PAY, type: "account_information" }),
      "[",
    ]) {
      await oauth2Error(
        await refresh(client, tokens.refresh_token, { authorization_details: wider }),
        400,
        "invalid_authorization_details",
      );
    }
    // Fewer: one detail, one action; the grant keeps both, so the next refresh without the parameter has both.
    const fewer = { ...PAY, actions: ["status"] };
    const narrowed = await refresh(client, tokens.refresh_token, { authorization_details: details(fewer) });
    expect(narrowed.status).toBe(200);
    const narrowedTokens = (await narrowed.json()) as {
      access_token: string;
      refresh_token: string;
      authorization_details: unknown;
    };
    expect(narrowedTokens.authorization_details).toEqual([fewer]);
    expect(decodeJwt(narrowedTokens.access_token).payload.authorization_details).toEqual([fewer]);
    const again = (await (await refresh(client, narrowedTokens.refresh_token)).json()) as {
      authorization_details: unknown;
    };
    expect(again.authorization_details).toEqual([PAY, second]);
  });

  // Threat: a type the admin withdrew from a client (a payment API switched off) still issued from an old grant.
  it("stops issuing a type the admin took from the client, at the next refresh", async () => {
    const client = await payingClient();
    const response = await tokensWith(client, { authorization_details: details(PAY) });
    const { refresh_token } = (await response.json()) as { refresh_token: string };
    const replaced = await svc.request("PUT", `/admin/oauth2/clients/${client.clientId}`, {
      headers: ADMIN,
      json: {
        clientName: client.clientName,
        redirectUris: client.redirectUris,
        scopes: client.scopes,
        grantTypes: client.grantTypes,
        authorizationDetailsTypes: [],
      },
    });
    expect(replaced.status).toBe(200);
    const refreshed = await refresh(client, refresh_token);
    expect(refreshed.status).toBe(200);
    const tokens = (await refreshed.json()) as { access_token: string; authorization_details?: unknown };
    expect(tokens.authorization_details).toBeUndefined();
    expect(decodeJwt(tokens.access_token).payload.authorization_details).toBeUndefined();
  });

  it("refuses a code exchange asking for more than was approved, and any details on a grant that has none", async () => {
    const client = await payingClient();
    const wider = await tokensWith(
      client,
      { authorization_details: details(PAY) },
      { authorization_details: details({ ...PAY, creditorName: "Someone else" }) },
    );
    await oauth2Error(wider, 400, "invalid_authorization_details");
    const none = await tokensWith(client, {}, { authorization_details: details(PAY) });
    await oauth2Error(none, 400, "invalid_authorization_details");
    // The same, or fewer, at the exchange: allowed.
    const same = await tokensWith(
      client,
      { authorization_details: details(PAY) },
      { authorization_details: details({ ...PAY, actions: ["initiate"] }) },
    );
    expect(((await same.json()) as { authorization_details: unknown }).authorization_details).toEqual([
      { ...PAY, actions: ["initiate"] },
    ]);
  });

  it("gives a client acting for itself the details of its types it asks for (client_credentials), and no others", async () => {
    const client = await payingClient();
    const asked = await postForm(
      svc,
      "/oauth2/token",
      { grant_type: "client_credentials", authorization_details: details(PAY) },
      basic(client),
    );
    expect(asked.status).toBe(200);
    const token = (await asked.json()) as { access_token: string; authorization_details: unknown };
    expect(token.authorization_details).toEqual([PAY]);
    expect(decodeJwt(token.access_token).payload.authorization_details).toEqual([PAY]);
    const foreign = await postForm(
      svc,
      "/oauth2/token",
      { grant_type: "client_credentials", authorization_details: details({ ...PAY, type: "x" }) },
      basic(client),
    );
    await oauth2Error(foreign, 400, "invalid_authorization_details");
  });
});

describe("authorization details types in the console", () => {
  const BASE = "/admin/console";
  const consolePost = (path: string, values: Record<string, string>, cookie: string) =>
    svc.request("POST", `${BASE}${path}`, {
      body: new URLSearchParams(values).toString(),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: new URL(SERVER).origin,
        cookie,
      },
    });

  it("shows and edits a client's types by the admin API's rules; the client's edit form keeps them", async () => {
    const login = await consolePost("/login", { secret: String(env.AUTH_ADMIN_SECRET) }, "");
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const client = await payingClient();
    const path = `/clients/${encodeURIComponent(client.clientId)}`;
    const clientPage = await (await svc.request("GET", `${BASE}${path}`, { headers: { cookie } })).text();
    expect(clientPage).toContain(`${path}/authorization-details">${TYPE}: edit</a>`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(clientPage)![1]!;
    const screen = await svc.request("GET", `${BASE}${path}/authorization-details`, { headers: { cookie } });
    const html = await screen.text();
    expect(screen.status).toBe(200);
    expect(html).toContain(`<td><code>${TYPE}</code></td>`);
    expect(html).toContain("Pay {{instructedAmount.amount}}");

    // A refused text comes back with the reason, nothing saved; a post without the CSRF token changes nothing.
    const refusedTexts: [string, string][] = [
      ["[{", "not JSON"],
      [JSON.stringify([{ ...PAYMENT_TYPE, schema: { type: "object", $ref: "#" } }]), "not supported"],
    ];
    for (const [types, reason] of refusedTexts) {
      const refused = await consolePost(`${path}/authorization-details`, { csrf, types }, cookie);
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain(reason);
    }
    const forged = await consolePost(`${path}/authorization-details`, { types: "[]" }, cookie);
    expect(forged.status).toBe(403);

    const renamed = { ...PAYMENT_TYPE, type: `${TYPE}_v2`, template: "Pay {{creditorName}}" };
    const saved = await consolePost(
      `${path}/authorization-details`,
      { csrf, types: JSON.stringify([renamed]) },
      cookie,
    );
    expect(saved.status).toBe(303);
    const read = async () =>
      (
        (await (
          await svc.request("GET", `/admin/oauth2/clients/${client.clientId}`, { headers: ADMIN })
        ).json()) as WireClient
      ).authorizationDetailsTypes;
    expect(await read()).toEqual([renamed]);
    // The client's own edit form (name, redirect URIs, scopes) leaves the types as they are.
    const edited = await consolePost(
      `${path}/edit`,
      {
        csrf,
        clientName: "Renamed",
        redirectUris: REDIRECT_URI,
        scopes: "openid",
        tokenEndpointAuthMethod: "client_secret_basic",
      },
      cookie,
    );
    expect(edited.status).toBe(303);
    expect(await read()).toEqual([renamed]);
  });
});
