// Hostile and malformed input at every endpoint of the authorization server: never a 5xx, always the documented
// error shape (RFC 6749 `{error, error_description}` for the OAuth2 endpoints, the contract's body for the JSON
// login step, an HTML problem page for the built-in page).
import { describe, expect, it } from "vitest";
import { SERVER, signUp } from "../helpers";
import { basic, newClient, provider } from "./support";

const svc = provider({ AUTH_OAUTH2_PROVIDER_REGISTRATION: "open" });
const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const huge = "x".repeat(20_000);
/** Long, but under the body limit together (a body over 64 KiB is 413 before any endpoint sees it). */
const big = "x".repeat(12_000);

const FORMS: [string, string, string | undefined][] = [
  ["an empty body", "", "application/x-www-form-urlencoded"],
  ["JSON", JSON.stringify({ grant_type: "authorization_code", token: "t" }), "application/json"],
  ["no content type", "grant_type=authorization_code", undefined],
  [
    "repeated parameters",
    "grant_type=refresh_token&grant_type=authorization_code&token=a&token=b",
    "application/x-www-form-urlencoded",
  ],
  ["broken percent-encoding", "grant_type=%E0%A4%A&code=%&token=%zz", "application/x-www-form-urlencoded"],
  [
    "huge values",
    `grant_type=authorization_code&code=${big}&token=${big}&refresh_token=${big}&redirect_uri=${big}`,
    "application/x-www-form-urlencoded",
  ],
  [
    "wrong grant values",
    "grant_type=refresh_token&refresh_token=ort_%00%01&code_verifier=%F0%9F%92%A9&scope=%00",
    "application/x-www-form-urlencoded",
  ],
  [
    "a multipart body",
    "--b\r\ncontent-disposition: form-data; name=token\r\n\r\nx\r\n--b--",
    "multipart/form-data; boundary=b",
  ],
];

const AUTHORIZATIONS = [
  undefined,
  "Basic",
  "Basic !!!notbase64",
  `Basic ${btoa("no-colon")}`,
  `Basic ${btoa("%E0%A4%A:%zz")}`,
  `Basic ${btoa(`${huge}:${huge}`)}`,
  "Bearer x.y.z",
];

async function expectOAuth2Error(response: Response, context: string) {
  expect(response.status, context).toBeGreaterThanOrEqual(400);
  expect(response.status, context).toBeLessThan(500);
  const body = (await response.json()) as Record<string, unknown>;
  expect(body, context).toEqual({ error: expect.any(String), error_description: expect.any(String) });
  expect(response.headers.get("cache-control"), context).toBe("no-store");
}

describe("OAuth2 endpoints never answer 5xx", () => {
  for (const path of [
    "/oauth2/token",
    "/oauth2/introspect",
    "/oauth2/revoke",
    "/oauth2/device_authorization",
  ]) {
    for (const [label, body, type] of FORMS) {
      it(`POST ${path} with ${label}`, async () => {
        for (const authorization of AUTHORIZATIONS) {
          const headers: Record<string, string> = {};
          if (type) headers["content-type"] = type;
          if (authorization) headers.authorization = authorization;
          const response = await svc.request("POST", path, { body, headers });
          await expectOAuth2Error(response, `${label} / ${authorization?.slice(0, 20)}`);
        }
      });
    }
  }

  it("POST /oauth2/token with a valid client and hostile parameters", async () => {
    const client = await newClient(svc);
    for (const [, body] of FORMS.filter(([, , type]) => type === "application/x-www-form-urlencoded")) {
      const response = await svc.request("POST", "/oauth2/token", {
        body,
        headers: { "content-type": "application/x-www-form-urlencoded", ...basic(client) },
      });
      await expectOAuth2Error(response, body.slice(0, 40));
    }
  });

  it("POST /oauth2/token with the device and client-credentials grants and hostile parameters", async () => {
    const device = await newClient(svc, {
      tokenEndpointAuthMethod: "none",
      grantTypes: [DEVICE_GRANT],
      redirectUris: [],
    });
    const machine = await newClient(svc, { grantTypes: ["client_credentials"], redirectUris: [] });
    const deviceBodies = [
      `grant_type=${DEVICE_GRANT}&client_id=${device.clientId}`,
      `grant_type=${DEVICE_GRANT}&client_id=${device.clientId}&device_code=${big}`,
      `grant_type=${DEVICE_GRANT}&client_id=${device.clientId}&device_code=%00%01`,
      `grant_type=${DEVICE_GRANT}&client_id=${device.clientId}&device_code=a&device_code=b`,
    ];
    for (const body of deviceBodies) {
      const response = await svc.request("POST", "/oauth2/token", {
        body,
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
      await expectOAuth2Error(response, body.slice(0, 80));
    }
    const machineBodies = [
      `grant_type=client_credentials&scope=${big}`,
      `grant_type=client_credentials&resource=${big}`,
      "grant_type=client_credentials&resource=%00",
      "grant_type=client_credentials&resource=javascript:alert(1)",
      `grant_type=client_credentials${"&resource=https://x.example".repeat(11)}`,
    ];
    for (const body of machineBodies) {
      const response = await svc.request("POST", "/oauth2/token", {
        body,
        headers: { "content-type": "application/x-www-form-urlencoded", ...basic(machine) },
      });
      await expectOAuth2Error(response, body.slice(0, 80));
    }
    for (const body of [
      `client_id=${device.clientId}&scope=${big}`,
      `client_id=${device.clientId}&resource=%zz`,
    ]) {
      const response = await svc.request("POST", "/oauth2/device_authorization", {
        body,
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
      await expectOAuth2Error(response, body.slice(0, 80));
    }
  });

  it("POST /oauth2/register with hostile bodies answers RFC 7591 errors", async () => {
    const deep = `${"[".repeat(5000)}${"]".repeat(5000)}`;
    const bodies: [string, string | undefined][] = [
      ["", "application/json"],
      ["{", "application/json"],
      [deep, "application/json"],
      [`{"redirect_uris":${deep}}`, "application/json"],
      [JSON.stringify({ redirect_uris: [1, 2] }), "application/json"],
      [JSON.stringify({ redirect_uris: [big] }), "application/json"],
      [JSON.stringify({ redirect_uris: Array(1000).fill("https://a.example/cb") }), "application/json"],
      [JSON.stringify({ client_name: { toString: "x" } }), "application/json"],
      [
        JSON.stringify({ __proto__: { redirect_uris: ["https://a.example"] }, constructor: 1 }),
        "application/json",
      ],
      [
        JSON.stringify({ redirect_uris: ["https://a.example/cb"], grant_types: "authorization_code" }),
        "application/json",
      ],
      [JSON.stringify({ redirect_uris: ["https://a.example/cb"], scope: 7 }), "application/json"],
      [JSON.stringify({ redirect_uris: ["https://a.example/cb"], contacts: [big] }), "application/json"],
      [JSON.stringify({ redirect_uris: ["https://%zz/cb"] }), "application/json"],
      [JSON.stringify({ redirect_uris: ["https://a.example/cb"] }), "text/plain"],
      ["redirect_uris=https://a.example/cb", undefined],
    ];
    for (const [body, type] of bodies) {
      const headers: Record<string, string> = type ? { "content-type": type } : {};
      const response = await svc.request("POST", "/oauth2/register", { body, headers });
      await expectOAuth2Error(response, body.slice(0, 60));
    }
    // Over the body limit: the auth API's own 413, before registration reads anything.
    const tooBig = await svc.request("POST", "/oauth2/register", {
      body: JSON.stringify({ client_name: "x".repeat(70_000) }),
      headers: { "content-type": "application/json" },
    });
    expect(tooBig.status).toBe(413);
  });

  it("the client configuration endpoint answers hostile ids and tokens with 401", async () => {
    for (const id of [
      encodeURIComponent(huge),
      "%00",
      "..%2F..%2Fadmin",
      encodeURIComponent("https://x.example/c.json"),
    ]) {
      for (const authorization of ["", "Bearer", `Bearer ${huge}`, "Basic abc", "Bearer ocr_x"]) {
        for (const method of ["GET", "PUT", "DELETE"]) {
          const response = await svc.request(method, `/oauth2/register/${id}`, {
            headers: { authorization, "content-type": "application/json" },
            body: method === "PUT" ? "{" : undefined,
          });
          await expectOAuth2Error(response, `${method} ${id.slice(0, 20)} ${authorization.slice(0, 12)}`);
        }
      }
    }
  });

  it("GET and POST /oauth2/authorize with hostile parameters answer a 4xx or a redirect to the client", async () => {
    const client = await newClient(svc);
    const queries = [
      "",
      `client_id=${huge}`,
      `client_id=${client.clientId}`,
      `client_id=${client.clientId}&redirect_uri=${huge}`,
      `client_id=${client.clientId}&redirect_uri=https%3A%2F%2Frp.example.com%2Fcallback&response_type=code&state=${huge}`,
      `client_id=${client.clientId}&redirect_uri=https%3A%2F%2Frp.example.com%2Fcallback&response_type=code&scope=${huge}`,
      `client_id=${client.clientId}&redirect_uri=https%3A%2F%2Frp.example.com%2Fcallback&response_type=code&max_age=1e99`,
      `client_id=${client.clientId}&redirect_uri=https%3A%2F%2Frp.example.com%2Fcallback&response_type=code&nonce=${huge}`,
      `client_id=${client.clientId}&redirect_uri=https%3A%2F%2Frp.example.com%2Fcallback&response_type=code&code_challenge=${huge}&code_challenge_method=S256`,
      "client_id=%zz&redirect_uri=%E0%A4%A",
    ];
    for (const query of queries) {
      for (const response of [
        await svc.get(`/oauth2/authorize?${query}`),
        await svc.request("POST", "/oauth2/authorize", {
          body: query,
          headers: { "content-type": "application/x-www-form-urlencoded" },
        }),
      ]) {
        const context = query.slice(0, 60);
        expect(response.status, context).toBeLessThan(500);
        if (response.status === 302) {
          const to = new URL(response.headers.get("location")!);
          expect(
            to.origin === "https://rp.example.com" || to.pathname.endsWith("/oauth2/interaction"),
            context,
          ).toBe(true);
        } else await expectOAuth2Error(response, context);
      }
    }
  });

  it("userinfo with hostile Authorization headers answers 401", async () => {
    for (const authorization of [
      "",
      "Bearer",
      `Bearer ${huge}`,
      "Bearer a.b.c",
      "Basic abc",
      `Bearer ${"e30.".repeat(3)}`,
    ]) {
      const response = await svc.request("GET", "/oauth2/userinfo", { headers: { authorization } });
      await expectOAuth2Error(response, authorization.slice(0, 20));
    }
  });

  it("the JSON login step answers the contract's error body", async () => {
    const session = await signUp(svc);
    for (const body of [
      "{",
      "[]",
      JSON.stringify({ requestId: huge }),
      JSON.stringify({ requestId: 7 }),
      "{}",
    ]) {
      const response = await svc.request("POST", "/oauth2/login", {
        body,
        headers: { "content-type": "application/json", authorization: `Bearer ${session.accessToken}` },
      });
      expect(response.status, body.slice(0, 20)).toBe(400);
      expect(await response.json()).toMatchObject({ status: 400, error: "invalid-request" });
    }
    for (const query of ["", `request_id=${huge}`, "request_id=%zz"]) {
      expect((await svc.get(`/oauth2/login?${query}`)).status, query.slice(0, 20)).toBe(400);
    }
  });

  it("the built-in page answers hostile forms with an HTML problem page, never a 5xx", async () => {
    for (const path of [
      "/oauth2/interaction/sign-in",
      "/oauth2/interaction/mfa",
      "/oauth2/interaction/consent",
      "/oauth2/interaction/switch",
    ]) {
      for (const [label, body, type] of FORMS) {
        const headers: Record<string, string> = {
          origin: SERVER,
          cookie: `oauth2_session=${huge.slice(0, 900)}.x`,
        };
        if (type) headers["content-type"] = type;
        const response = await svc.request("POST", path, { body, headers });
        expect(response.status, `${path} ${label}`).toBeGreaterThanOrEqual(400);
        expect(response.status, `${path} ${label}`).toBeLessThan(500);
        expect(response.headers.get("content-type"), `${path} ${label}`).toMatch(/text\/html/);
      }
    }
    for (const query of ["", `request_id=${huge}`, "request_id=%zz"]) {
      const response = await svc.get(`/oauth2/interaction?${query}`);
      expect(response.status).toBe(400);
    }
  });

  it("the device page answers hostile forms and queries with HTML, never a 5xx", async () => {
    for (const [label, body, type] of [
      ...FORMS,
      ["a huge code", `user_code=${big}`, "application/x-www-form-urlencoded"] as const,
      ["a code of NULs", "user_code=%00%00%00%00%00%00%00%00", "application/x-www-form-urlencoded"] as const,
    ]) {
      const headers: Record<string, string> = { origin: SERVER };
      if (type) headers["content-type"] = type;
      const response = await svc.request("POST", "/oauth2/device", { body, headers });
      expect(response.status, label).toBeGreaterThanOrEqual(400);
      expect(response.status, label).toBeLessThan(500);
      expect(response.headers.get("content-type"), label).toMatch(/text\/html/);
    }
    for (const query of [
      `user_code=${huge}`,
      "user_code=%zz",
      "user_code=<b>x</b>",
      "result=approved&user_code=1",
    ]) {
      const response = await svc.get(`/oauth2/device?${query}`);
      expect(response.status, query.slice(0, 20)).toBe(200);
      expect(await response.text()).not.toContain("<b>x</b>");
    }
  });
});
