// Resource indicators (RFC 8707, contract §3.6): a token's `aud` is the resource it is for, so a resource server
// that checks its audience refuses a token meant for another one. Threats: a token for one API replayed at another
// (audience confusion), a client asking for a resource the deployment does not serve or the client may not use, and
// a refresh that widens what the person allowed.
import { describe, expect, it } from "vitest";
import type { WireClient } from "../../src/oauth2/clients";
import { getConfig } from "../../src/runtime/config";
import { decodeJwt, signUp, type TestService } from "../helpers";
import {
  basic,
  exchange,
  location,
  newClient,
  oauth2Error,
  postForm,
  provider,
  REDIRECT_URI,
  requestIdOf,
  type TokenAnswer,
} from "./support";

const MCP = "https://mcp.example.com/mcp";
const API = "https://api.example.com";
const svc = provider({ AUTH_OAUTH2_PROVIDER_RESOURCES: `${MCP},${API}` });

function authorizeFor(client: WireClient, resources: string[], on: TestService = svc) {
  const params = new URLSearchParams({
    client_id: client.clientId,
    redirect_uri: REDIRECT_URI,
    response_type: "code",
    scope: "openid offline_access",
    state: "s",
  });
  for (const resource of resources) params.append("resource", resource);
  return on.request("GET", `/oauth2/authorize?${params}`);
}

/** The code flow with `resources` on the authorize request; `extra` goes to the token request. */
async function tokensFor(client: WireClient, resources: string[], extra: Record<string, string> = {}) {
  const requestId = await requestIdOf(await authorizeFor(client, resources));
  const session = await signUp(svc);
  const done = await svc.post("/oauth2/login", { requestId }, session.accessToken);
  const code = new URL(((await done.json()) as { redirectUri: string }).redirectUri).searchParams.get(
    "code",
  )!;
  return exchange(svc, client, code, extra);
}

const refresh = (client: WireClient, refreshToken: string, resource?: string) =>
  postForm(
    svc,
    "/oauth2/token",
    { grant_type: "refresh_token", refresh_token: refreshToken, ...(resource ? { resource } : {}) },
    basic(client),
  );

const audienceOf = (tokens: TokenAnswer) => decodeJwt(tokens.access_token).payload.aud;

describe("resource indicators (RFC 8707)", () => {
  it("binds the access token to the resource asked for; introspection says so", async () => {
    const client = await newClient(svc);
    const response = await tokensFor(client, [MCP]);
    expect(response.status).toBe(200);
    const tokens = (await response.json()) as TokenAnswer;
    expect(audienceOf(tokens)).toBe(MCP);
    const introspection = await postForm(
      svc,
      "/oauth2/introspect",
      { token: tokens.access_token },
      basic(client),
    );
    expect(await introspection.json()).toMatchObject({ active: true, aud: MCP });
    // The ID token is still for the client (OIDC), whatever the access token is for.
    expect(decodeJwt(tokens.id_token!).payload.aud).toBe(client.clientId);
  });

  it("without a resource the audience is the client itself, as before", async () => {
    const client = await newClient(svc);
    const tokens = (await (await tokensFor(client, [])).json()) as TokenAnswer;
    expect(audienceOf(tokens)).toBe(client.clientId);
  });

  it("the storage API is a resource by default", async () => {
    const plain = provider();
    const storage = getConfig(plain.env).oauth2.resources;
    expect(storage).toEqual([expect.stringMatching(/\/storage\/v1$/)]);
    const client = await newClient(plain);
    expect(location(await authorizeFor(client, storage, plain)).searchParams.get("request_id")).toBeTruthy();
  });

  it("two resources make an array audience; the token request may narrow it to one, never widen it", async () => {
    const client = await newClient(svc);
    const both = (await (await tokensFor(client, [MCP, API])).json()) as TokenAnswer;
    expect(audienceOf(both)).toEqual([MCP, API]);
    const narrowed = (await (await tokensFor(client, [MCP, API], { resource: API })).json()) as TokenAnswer;
    expect(audienceOf(narrowed)).toBe(API);
    await oauth2Error(await tokensFor(client, [MCP], { resource: API }), 400, "invalid_target");
  });

  it("refuses a resource this deployment does not serve, or one with a fragment, back at the client", async () => {
    const client = await newClient(svc);
    for (const resource of ["https://elsewhere.example.com", `${MCP}#part`, "not a uri"]) {
      const back = location(await authorizeFor(client, [resource]));
      expect(back.origin + back.pathname).toBe(REDIRECT_URI);
      expect(back.searchParams.get("error")).toBe("invalid_target");
      expect(back.searchParams.get("state")).toBe("s");
    }
  });

  it("a client narrowed to some resources cannot ask for the others; an admin cannot name unknown ones", async () => {
    const client = await newClient(svc, { resources: [MCP] });
    expect(client.resources).toEqual([MCP]);
    expect(location(await authorizeFor(client, [API])).searchParams.get("error")).toBe("invalid_target");
    expect(location(await authorizeFor(client, [MCP])).searchParams.get("request_id")).toBeTruthy();
    const refused = await svc.request("POST", "/admin/oauth2/clients", {
      headers: { "x-hasura-admin-secret": String(svc.env.AUTH_ADMIN_SECRET) },
      json: { clientName: "x", redirectUris: [REDIRECT_URI], resources: ["https://unknown.example"] },
    });
    expect(refused.status).toBe(400);
  });

  it("a refresh may narrow to one resource, and a refused widening spends nothing", async () => {
    const client = await newClient(svc);
    const first = (await (await tokensFor(client, [MCP])).json()) as TokenAnswer;
    await oauth2Error(await refresh(client, first.refresh_token!, API), 400, "invalid_target");
    // The refused request did not spend the token.
    const again = await refresh(client, first.refresh_token!, MCP);
    expect(again.status).toBe(200);
    const next = (await again.json()) as TokenAnswer;
    expect(audienceOf(next)).toBe(MCP);
    // Without a resource, a refresh gets the grant's resources again.
    const plain = (await (await refresh(client, next.refresh_token!)).json()) as TokenAnswer;
    expect(audienceOf(plain)).toBe(MCP);
  });

  it("userinfo refuses a token meant for another resource", async () => {
    const client = await newClient(svc);
    const tokens = (await (await tokensFor(client, [MCP])).json()) as TokenAnswer;
    await oauth2Error(await svc.get("/oauth2/userinfo", tokens.access_token), 401, "invalid_token");
  });

  it("a repeated resource is fine; more than ten is refused", async () => {
    const client = await newClient(svc);
    const tokens = (await (await tokensFor(client, [MCP, MCP])).json()) as TokenAnswer;
    expect(audienceOf(tokens)).toBe(MCP);
    const params = new URLSearchParams({ grant_type: "client_credentials" });
    for (let i = 0; i < 11; i++) params.append("resource", MCP);
    const response = await svc.request("POST", "/oauth2/token", {
      body: params.toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", ...basic(client) },
    });
    await oauth2Error(response, 400, "invalid_target");
  });
});
