// The Identity Assertion JWT Authorization Grant (ID-JAG, draft-ietf-oauth-identity-assertion-authz-grant; MCP's
// enterprise-managed authorization): an enterprise IdP the client trusts issues a JWT of type oauth-id-jag+jwt saying
// "this user lets this client reach this resource with these scopes", and this server, the resource's authorization
// server, turns it into an access token through the JWT bearer grant. Threats, each named in its test: an ID-JAG
// issued for another client redeemed by this one, a resource the client may not reach, a request wider than the
// assertion, a replayed ID-JAG, one addressed to the token endpoint rather than this server's issuer, one this server
// would have issued itself (draft §7.3), an unsigned one, and a public client redeeming one.
import { base64url } from "jose";
import { describe, expect, it } from "vitest";
import { decodeJwt, signUp } from "../helpers";
import { fakeIdp, JWT_BEARER, redeem, trustingClient } from "./assertions";
import { basic, ISSUER, oauth2Error, postForm, provider, type TokenAnswer } from "./support";

const MCP = "https://mcp.example.com/mcp";
const API = "https://api.example.com";
const OTHER = "https://other.example.com";
const svc = provider({ AUTH_OAUTH2_PROVIDER_RESOURCES: `${MCP},${API},${OTHER}` });
const ID_JAG = { typ: "oauth-id-jag+jwt" };

/** An enterprise IdP, an MCP host the IdP and this server both know, and a user of this service. */
async function enterprise(body: Record<string, unknown> = {}) {
  const idp = await fakeIdp();
  const client = await trustingClient(svc, idp, {
    clientName: "Enterprise MCP host",
    scopes: ["openid", "profile", "email"],
    resources: [MCP, API],
    ...body,
  });
  const user = (await signUp(svc)).user;
  return { idp, client, user };
}

async function refused(response: Response, error: string, why: string) {
  const body = await oauth2Error(response, 400, error);
  expect(body.error_description).toContain(why);
}

describe("ID-JAG (identity assertion authorization grant)", () => {
  it("gives an access token for the asserted resource and scopes, for the client the IdP named, with no refresh token", async () => {
    const { idp, client, user } = await enterprise();
    const jag = await idp.sign(
      {
        sub: user.id,
        client_id: client.clientId,
        resource: MCP,
        scope: "openid profile",
        auth_time: 1_700_000_000,
      },
      ID_JAG,
    );
    const response = await redeem(svc, client, jag);
    expect(response.status).toBe(200);
    const answer = (await response.json()) as TokenAnswer;
    expect(answer).toEqual({
      access_token: expect.any(String),
      token_type: "Bearer",
      expires_in: 900,
      scope: "openid profile",
    });
    expect(decodeJwt(answer.access_token).payload).toMatchObject({
      iss: ISSUER,
      sub: user.id,
      aud: MCP,
      client_id: client.clientId,
      scope: "openid profile",
      auth_time: 1_700_000_000,
    });
    const introspection = await postForm(
      svc,
      "/oauth2/introspect",
      { token: answer.access_token },
      basic(client),
    );
    expect(await introspection.json()).toMatchObject({ active: true, sub: user.id, aud: MCP });
  });

  it("issues fewer scopes than asserted when the client may not have them, and says so (RFC 6749 §3.3)", async () => {
    const { idp, client, user } = await enterprise({ scopes: ["openid"] });
    const jag = await idp.sign(
      { sub: user.id, client_id: client.clientId, resource: MCP, scope: "openid email" },
      ID_JAG,
    );
    const answer = (await (await redeem(svc, client, jag)).json()) as TokenAnswer;
    expect(answer.scope).toBe("openid");
  });

  it("lets the request narrow the asserted resources and scopes, never widen them", async () => {
    const { idp, client, user } = await enterprise();
    const claims = {
      sub: user.id,
      client_id: client.clientId,
      resource: [MCP, API],
      scope: "openid profile",
    };
    const narrowed = await redeem(svc, client, await idp.sign(claims, ID_JAG), {
      resource: API,
      scope: "openid",
    });
    expect(narrowed.status).toBe(200);
    expect(decodeJwt(((await narrowed.json()) as TokenAnswer).access_token).payload).toMatchObject({
      aud: API,
      scope: "openid",
    });
    await oauth2Error(
      await redeem(svc, client, await idp.sign(claims, ID_JAG), { scope: "openid email" }),
      400,
      "invalid_scope",
    );
    await oauth2Error(
      await redeem(svc, client, await idp.sign({ ...claims, resource: MCP }, ID_JAG), { resource: API }),
      400,
      "invalid_target",
    );
  });

  it("refuses an ID-JAG issued for another client (a grant stolen from the client it was meant for)", async () => {
    const { idp, client, user } = await enterprise();
    const victim = await trustingClient(svc, idp);
    const jag = await idp.sign({ sub: user.id, client_id: victim.clientId, resource: MCP }, ID_JAG);
    await refused(await redeem(svc, client, jag), "invalid_grant", "another client");
    // An ID-JAG that names no client at all is refused the same way.
    await refused(
      await redeem(svc, client, await idp.sign({ sub: user.id, resource: MCP }, ID_JAG)),
      "invalid_grant",
      "another client",
    );
  });

  it("refuses a resource the client may not reach (invalid_target)", async () => {
    const { idp, client, user } = await enterprise();
    const jag = await idp.sign({ sub: user.id, client_id: client.clientId, resource: OTHER }, ID_JAG);
    await oauth2Error(await redeem(svc, client, jag), 400, "invalid_target");
  });

  it("refuses a replayed ID-JAG (jti used once): the client asks the IdP for a new one", async () => {
    const { idp, client, user } = await enterprise();
    const jag = await idp.sign({ sub: user.id, client_id: client.clientId, resource: MCP }, ID_JAG);
    expect((await redeem(svc, client, jag)).status).toBe(200);
    await refused(await redeem(svc, client, jag), "invalid_grant", "used before");
  });

  it("refuses an ID-JAG addressed to the token endpoint: its audience is this server's issuer (draft §4.4.1)", async () => {
    const { idp, client, user } = await enterprise();
    const jag = await idp.sign(
      { sub: user.id, client_id: client.clientId, resource: MCP, aud: `${ISSUER}/oauth2/token` },
      ID_JAG,
    );
    await refused(await redeem(svc, client, jag), "invalid_grant", "aud");
  });

  it("refuses an ID-JAG with this server as issuer: it never honours its own grants (draft §7.3)", async () => {
    const idp = await fakeIdp();
    const client = await trustingClient(svc, idp, {
      trustedIssuers: [{ issuer: ISSUER, jwks: { keys: [idp.publicJwk] } }],
    });
    const user = (await signUp(svc)).user;
    const jag = await idp.sign({ iss: ISSUER, sub: user.id, client_id: client.clientId }, ID_JAG);
    await refused(await redeem(svc, client, jag), "invalid_grant", "this server");
  });

  it("refuses an unsigned ID-JAG (alg none)", async () => {
    const { idp, client, user } = await enterprise();
    const now = Math.floor(Date.now() / 1000);
    const encode = (value: unknown) => base64url.encode(JSON.stringify(value));
    const claims = {
      iss: idp.issuer,
      sub: user.id,
      aud: ISSUER,
      client_id: client.clientId,
      jti: "j1",
      iat: now,
      exp: now + 300,
    };
    const unsigned = `${encode({ alg: "none", typ: ID_JAG.typ })}.${encode(claims)}.`;
    await refused(await redeem(svc, client, unsigned), "invalid_grant", "algorithm");
  });

  it("is for confidential clients only (draft §7.1): a public client cannot be given the grant", async () => {
    const response = await svc.request("POST", "/admin/oauth2/clients", {
      headers: { "x-hasura-admin-secret": String(svc.env.AUTH_ADMIN_SECRET) },
      json: {
        clientName: "Public host",
        redirectUris: [],
        grantTypes: [JWT_BEARER],
        tokenEndpointAuthMethod: "none",
      },
    });
    expect(response.status).toBe(400);
  });
});
