// Token exchange (RFC 8693, contract §12): an MCP server that was given a user's token (for itself) exchanges it for a
// down-scoped token of its own for a downstream API, instead of passing the user's token on. Threats, each named in
// its test: an audience the client may not reach, a scope wider than the subject token's, a token the client was
// never given (another client's, for another API), an expired, revoked, refresh, forged or unsigned subject token, a
// client without the grant (or a public one), an actor token of someone else, self-registration of the grant, and a
// chain of exchanges that widens instead of narrowing.
import { generateKeyPair, SignJWT } from "jose";
import * as oidc from "openid-client";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { WireClient } from "../../src/oauth2/clients";
import { decodeJwt, signUp } from "../helpers";
import { viaService } from "./assertions";
import {
  basic,
  codeFor,
  exchange,
  ISSUER,
  newClient,
  oauth2Error,
  postForm,
  provider,
  s256,
  type TokenAnswer,
  VERIFIER,
} from "./support";

const MCP = "https://mcp.example.com/mcp";
const API = "https://api.example.com";
const OTHER = "https://other.example.com";
const svc = provider({
  AUTH_OAUTH2_PROVIDER_RESOURCES: `${MCP},${API},${OTHER}`,
  AUTH_OAUTH2_PROVIDER_REGISTRATION: "open",
});

const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token";

afterEach(() => {
  vi.useRealTimers();
});

/** An MCP server's client: it may exchange tokens given to it (for MCP) for tokens for API. */
const mcpServer = (body: Record<string, unknown> = {}) =>
  newClient(svc, {
    clientName: "MCP server",
    redirectUris: [],
    grantTypes: [TOKEN_EXCHANGE, "client_credentials"],
    resources: [MCP, API],
    ...body,
  });

/** The user's MCP host got a token for the MCP server through the code flow (RFC 8707 `resource`). */
async function userTokenFor(
  resource: string | undefined,
  scope = "openid profile email offline_access",
  client?: WireClient,
) {
  const host = client ?? (await newClient(svc, { clientName: "MCP host" }));
  const session = await signUp(svc);
  const { code } = await codeFor(svc, host, session, {
    scope,
    code_challenge: await s256(VERIFIER),
    code_challenge_method: "S256",
    ...(resource ? { resource } : {}),
  });
  const response = await exchange(svc, host, code, { code_verifier: VERIFIER });
  expect(response.status).toBe(200);
  return { host, session, tokens: (await response.json()) as TokenAnswer };
}

const exchangeAs = (client: WireClient, values: Record<string, string | undefined>) =>
  postForm(
    svc,
    "/oauth2/token",
    { grant_type: TOKEN_EXCHANGE, subject_token_type: ACCESS_TOKEN, resource: API, ...values },
    basic(client),
  );

const introspect = (client: WireClient, token: string) =>
  postForm(svc, "/oauth2/introspect", { token }, basic(client)).then(
    (response) => response.json() as Promise<Record<string, unknown>>,
  );

describe("token exchange (RFC 8693)", () => {
  it("gives an MCP server a down-scoped token for the downstream API with act, under the user's grant (openid-client)", async () => {
    const { host, session, tokens } = await userTokenFor(MCP);
    const mcp = await mcpServer();
    const config = await oidc.discovery(
      new URL(ISSUER),
      mcp.clientId,
      undefined,
      oidc.ClientSecretBasic(mcp.clientSecret!),
      { execute: [oidc.allowInsecureRequests], [oidc.customFetch]: viaService(svc) },
    );
    expect(config.serverMetadata().grant_types_supported).toContain(TOKEN_EXCHANGE);
    const answer = await oidc.genericGrantRequest(config, TOKEN_EXCHANGE, {
      subject_token: tokens.access_token,
      subject_token_type: ACCESS_TOKEN,
      resource: API,
      scope: "openid profile",
    });
    expect(answer).toMatchObject({
      issued_token_type: ACCESS_TOKEN,
      token_type: "bearer",
      scope: "openid profile",
    });
    expect(answer.refresh_token).toBeUndefined();
    expect(answer.id_token).toBeUndefined();
    const subject = decodeJwt(tokens.access_token).payload;
    const { header, payload } = decodeJwt(answer.access_token);
    expect(header.typ).toBe("at+jwt");
    expect(payload).toMatchObject({
      iss: ISSUER,
      sub: session.user.id,
      aud: API,
      client_id: mcp.clientId,
      grant_id: subject.grant_id,
      scope: "openid profile",
      act: { sub: mcp.clientId, client_id: mcp.clientId },
    });
    expect(payload.exp as number).toBeLessThanOrEqual(subject.exp as number);
    expect(await introspect(mcp, answer.access_token)).toMatchObject({
      active: true,
      sub: session.user.id,
      aud: API,
      act: { sub: mcp.clientId, client_id: mcp.clientId },
    });
    // The user's grant ends (the host signs out): the exchanged token ends with it.
    const revoked = await postForm(svc, "/oauth2/revoke", { token: tokens.refresh_token! }, basic(host));
    expect(revoked.status).toBe(200);
    expect(await introspect(mcp, answer.access_token)).toEqual({ active: false });
  });

  it("works as docs/mcp.md shows it: a Configuration of settled values, no discovery", async () => {
    const { tokens } = await userTokenFor(MCP);
    const mcp = await mcpServer();
    const config = new oidc.Configuration(
      { issuer: ISSUER, token_endpoint: `${ISSUER}/oauth2/token` },
      mcp.clientId,
      undefined,
      oidc.ClientSecretBasic(mcp.clientSecret!),
    );
    config[oidc.customFetch] = viaService(svc);
    oidc.allowInsecureRequests(config); // the test server is http
    const answer = await oidc.genericGrantRequest(config, TOKEN_EXCHANGE, {
      subject_token: tokens.access_token,
      subject_token_type: ACCESS_TOKEN,
      resource: API,
    });
    expect(decodeJwt(answer.access_token).payload).toMatchObject({ aud: API, act: { sub: mcp.clientId } });
  });

  it("binds the exchanged token to the MCP server's own DPoP key when it sends a proof (RFC 9449)", async () => {
    const { tokens } = await userTokenFor(MCP);
    const mcp = await mcpServer();
    const config = new oidc.Configuration(
      { issuer: ISSUER, token_endpoint: `${ISSUER}/oauth2/token` },
      mcp.clientId,
      undefined,
      oidc.ClientSecretBasic(mcp.clientSecret!),
    );
    config[oidc.customFetch] = viaService(svc);
    oidc.allowInsecureRequests(config);
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair("ES256"));
    const answer = await oidc.genericGrantRequest(
      config,
      TOKEN_EXCHANGE,
      { subject_token: tokens.access_token, subject_token_type: ACCESS_TOKEN, resource: API },
      { DPoP },
    );
    expect(answer.token_type).toBe("dpop");
    expect(decodeJwt(answer.access_token).payload.cnf).toEqual({ jkt: await DPoP.calculateThumbprint() });
  });

  it("takes `audience` as a resource, defaults to the subject's scopes within the client's, and answers no-store", async () => {
    const { tokens } = await userTokenFor(MCP, "openid email");
    const mcp = await mcpServer({ scopes: ["openid", "profile"] });
    const response = await exchangeAs(mcp, {
      subject_token: tokens.access_token,
      resource: undefined,
      audience: API,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const answer = (await response.json()) as TokenAnswer & { issued_token_type: string };
    expect(answer.scope).toBe("openid");
    expect(decodeJwt(answer.access_token).payload.aud).toBe(API);
  });

  it("accepts the client's own client_credentials token as actor_token, and refuses another client's (actor impersonation)", async () => {
    const { tokens } = await userTokenFor(MCP);
    const mcp = await mcpServer();
    const other = await mcpServer();
    const ownToken = async (client: WireClient) => {
      const response = await postForm(
        svc,
        "/oauth2/token",
        { grant_type: "client_credentials" },
        basic(client),
      );
      return ((await response.json()) as TokenAnswer).access_token;
    };
    const good = await exchangeAs(mcp, {
      subject_token: tokens.access_token,
      actor_token: await ownToken(mcp),
      actor_token_type: ACCESS_TOKEN,
    });
    expect(good.status).toBe(200);
    const stolen = await exchangeAs(mcp, {
      subject_token: tokens.access_token,
      actor_token: await ownToken(other),
      actor_token_type: ACCESS_TOKEN,
    });
    await oauth2Error(stolen, 400, "invalid_request");
    await oauth2Error(
      await exchangeAs(mcp, { subject_token: tokens.access_token, actor_token_type: ACCESS_TOKEN }),
      400,
      "invalid_request",
    );
  });

  it("refuses an audience the client may not reach (invalid_target), and a request naming none", async () => {
    const { tokens } = await userTokenFor(MCP);
    const mcp = await mcpServer();
    // OTHER is served by the deployment, but not among this client's resources.
    await oauth2Error(
      await exchangeAs(mcp, { subject_token: tokens.access_token, resource: OTHER }),
      400,
      "invalid_target",
    );
    await oauth2Error(
      await exchangeAs(mcp, { subject_token: tokens.access_token, resource: "https://evil.example.com" }),
      400,
      "invalid_target",
    );
    await oauth2Error(
      await exchangeAs(mcp, { subject_token: tokens.access_token, resource: undefined, audience: OTHER }),
      400,
      "invalid_target",
    );
    await oauth2Error(
      await exchangeAs(mcp, { subject_token: tokens.access_token, resource: undefined }),
      400,
      "invalid_request",
    );
  });

  it("refuses a scope wider than the subject token's (privilege escalation through exchange)", async () => {
    const { tokens } = await userTokenFor(MCP, "openid profile");
    const mcp = await mcpServer();
    const response = await exchangeAs(mcp, { subject_token: tokens.access_token, scope: "openid email" });
    await oauth2Error(response, 400, "invalid_scope");
  });

  it("refuses a token the client was never given: another client's own token, a token for another API", async () => {
    const mcp = await mcpServer();
    // A token the host got for itself (aud = the host), which reached the MCP server somehow.
    const forTheHost = await userTokenFor(undefined);
    await oauth2Error(
      await exchangeAs(mcp, { subject_token: forTheHost.tokens.access_token }),
      400,
      "invalid_grant",
    );
    // A token for another API (OTHER) that the MCP server's client is not.
    const forOther = await userTokenFor(OTHER);
    await oauth2Error(
      await exchangeAs(mcp, { subject_token: forOther.tokens.access_token }),
      400,
      "invalid_grant",
    );
  });

  it("lets a client exchange a token issued to it (for itself) for an API it may reach", async () => {
    const agent = await newClient(svc, {
      grantTypes: ["authorization_code", "refresh_token", TOKEN_EXCHANGE],
      resources: [API],
    });
    const { tokens } = await userTokenFor(undefined, "openid profile", agent);
    expect(decodeJwt(tokens.access_token).payload.aud).toBe(agent.clientId);
    const response = await exchangeAs(agent, { subject_token: tokens.access_token });
    expect(response.status).toBe(200);
    const { payload } = decodeJwt(((await response.json()) as TokenAnswer).access_token);
    expect(payload).toMatchObject({ aud: API, client_id: agent.clientId, act: { sub: agent.clientId } });
  });

  it("refuses an expired subject token (the exchange is no way to stretch a token's life)", async () => {
    const { tokens } = await userTokenFor(MCP);
    const mcp = await mcpServer();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 16 * 60 * 1000);
    await oauth2Error(await exchangeAs(mcp, { subject_token: tokens.access_token }), 400, "invalid_grant");
  });

  it("refuses a subject token whose grant was revoked", async () => {
    const { host, tokens } = await userTokenFor(MCP);
    const mcp = await mcpServer();
    await postForm(svc, "/oauth2/revoke", { token: tokens.refresh_token! }, basic(host));
    await oauth2Error(await exchangeAs(mcp, { subject_token: tokens.access_token }), 400, "invalid_grant");
  });

  it("refuses a refresh token as subject, whether called an access token or a refresh token", async () => {
    const { tokens } = await userTokenFor(MCP);
    const mcp = await mcpServer();
    await oauth2Error(await exchangeAs(mcp, { subject_token: tokens.refresh_token }), 400, "invalid_grant");
    await oauth2Error(
      await exchangeAs(mcp, {
        subject_token: tokens.refresh_token,
        subject_token_type: "urn:ietf:params:oauth:token-type:refresh_token",
      }),
      400,
      "invalid_request",
    );
  });

  it("refuses a forged subject token: unsigned (alg none), or signed by another key under our kid", async () => {
    const { tokens } = await userTokenFor(MCP);
    const mcp = await mcpServer();
    const { header, payload } = decodeJwt(tokens.access_token);
    const encode = (value: unknown) =>
      btoa(JSON.stringify(value)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
    const unsigned = `${encode({ ...header, alg: "none" })}.${encode({ ...payload, scope: "openid profile email graphql" })}.`;
    await oauth2Error(await exchangeAs(mcp, { subject_token: unsigned }), 400, "invalid_grant");
    const { privateKey } = await generateKeyPair("RS256");
    const forged = await new SignJWT(payload)
      .setProtectedHeader({ alg: "RS256", kid: String(header.kid), typ: "at+jwt" })
      .sign(privateKey);
    await oauth2Error(await exchangeAs(mcp, { subject_token: forged }), 400, "invalid_grant");
  });

  it("refuses a client without the grant, and an admin cannot give the grant to a public client", async () => {
    const { tokens } = await userTokenFor(MCP);
    const plain = await newClient(svc, {
      redirectUris: [],
      grantTypes: ["client_credentials"],
      resources: [MCP, API],
    });
    await oauth2Error(
      await exchangeAs(plain, { subject_token: tokens.access_token }),
      400,
      "unauthorized_client",
    );
    const refused = await svc.request("POST", "/admin/oauth2/clients", {
      headers: { "x-hasura-admin-secret": String(svc.env.AUTH_ADMIN_SECRET) },
      json: {
        clientName: "Public",
        redirectUris: [],
        grantTypes: [TOKEN_EXCHANGE],
        tokenEndpointAuthMethod: "none",
      },
    });
    expect(refused.status).toBe(400);
  });

  it("refuses the grant to self-registered clients (a stranger minting tokens for the deployment's APIs)", async () => {
    const response = await svc.post("/oauth2/register", {
      client_name: "Agent",
      redirect_uris: ["https://agent.example.com/cb"],
      grant_types: ["authorization_code", TOKEN_EXCHANGE],
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: "invalid_client_metadata" });
  });

  it("lets a registered client keep the grant an admin allowed through its own updates, never add it back", async () => {
    const created = await svc.post("/oauth2/register", {
      client_name: "Agent",
      redirect_uris: ["https://agent.example.com/cb"],
    });
    const client = (await created.json()) as {
      client_id: string;
      registration_access_token: string;
      registration_client_uri: string;
    };
    const allowed = await svc.request("PUT", `/admin/oauth2/clients/${client.client_id}`, {
      headers: { "x-hasura-admin-secret": String(svc.env.AUTH_ADMIN_SECRET) },
      json: {
        clientName: "Agent",
        redirectUris: ["https://agent.example.com/cb"],
        grantTypes: ["authorization_code", TOKEN_EXCHANGE],
      },
    });
    expect(allowed.status).toBe(200);
    let token = client.registration_access_token;
    const update = async (grantTypes: string[]) => {
      const response = await svc.request("PUT", client.registration_client_uri, {
        token,
        json: {
          client_id: client.client_id,
          client_name: "Agent",
          redirect_uris: ["https://agent.example.com/cb"],
          grant_types: grantTypes,
        },
      });
      if (response.status === 200) {
        token = ((await response.clone().json()) as { registration_access_token: string })
          .registration_access_token;
      }
      return response;
    };
    expect((await update(["authorization_code", TOKEN_EXCHANGE])).status).toBe(200);
    expect((await update(["authorization_code"])).status).toBe(200);
    const again = await update(["authorization_code", TOKEN_EXCHANGE]);
    expect({ status: again.status, body: await again.json() }).toMatchObject({
      status: 400,
      body: { error: "invalid_client_metadata" },
    });
  });

  it("lets an exchanged token be exchanged again only narrower, with the actors nested (act chain)", async () => {
    const { session, tokens } = await userTokenFor(MCP, "openid profile email");
    const mcp = await mcpServer();
    const first = (await (
      await exchangeAs(mcp, { subject_token: tokens.access_token, scope: "openid profile" })
    ).json()) as TokenAnswer;
    // The downstream API is itself a client that calls OTHER for the user.
    const api = await mcpServer({ clientName: "Downstream API", resources: [API, OTHER] });
    await oauth2Error(
      await exchangeAs(api, {
        subject_token: first.access_token,
        resource: OTHER,
        scope: "openid profile email",
      }),
      400,
      "invalid_scope",
    );
    const second = await exchangeAs(api, {
      subject_token: first.access_token,
      resource: OTHER,
      scope: "openid",
    });
    expect(second.status).toBe(200);
    const { payload } = decodeJwt(((await second.json()) as TokenAnswer).access_token);
    expect(payload).toMatchObject({
      sub: session.user.id,
      aud: OTHER,
      client_id: api.clientId,
      scope: "openid",
      act: {
        sub: api.clientId,
        client_id: api.clientId,
        act: { sub: mcp.clientId, client_id: mcp.clientId },
      },
    });
  });
});
