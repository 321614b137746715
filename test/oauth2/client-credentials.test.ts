// The client credentials grant (RFC 6749 §4.4, contract §3.6): a confidential client acting for itself. Threats: a
// public client (no secret, so anyone can claim to be it) minting tokens; a machine token passed off as a person's
// (it carries no person's scopes, no ID token, no refresh token, and userinfo refuses it). Issue 28: a resource server
// had no reliable way to tell a machine's token from a person's (only the absence of grant_id); now a machine token
// says so (`gty: client_credentials`, `sub` = `client_id`) and no person's token can look like one.
import { describe, expect, it } from "vitest";
import type { WireClient } from "../../src/oauth2/clients";
import { decodeJwt } from "../helpers";
import {
  basic,
  grantFor,
  ISSUER,
  newClient,
  oauth2Error,
  postForm,
  provider,
  type TokenAnswer,
} from "./support";

const MCP = "https://mcp.example.com/mcp";
const svc = provider({ AUTH_OAUTH2_PROVIDER_RESOURCES: MCP });

const machine = () => newClient(svc, { grantTypes: ["client_credentials"], redirectUris: [] });

const credentials = (client: WireClient, values: Record<string, string> = {}) =>
  postForm(svc, "/oauth2/token", { grant_type: "client_credentials", ...values }, basic(client));

describe("client_credentials", () => {
  it("gives a confidential client a token about itself: sub = client id, no refresh or ID token", async () => {
    const client = await machine();
    const response = await credentials(client, { resource: MCP });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const tokens = (await response.json()) as TokenAnswer;
    expect(tokens).toEqual({
      access_token: expect.any(String),
      token_type: "Bearer",
      expires_in: 900,
      scope: "",
    });
    const { header, payload } = decodeJwt(tokens.access_token);
    expect(header.typ).toBe("at+jwt");
    expect(payload).toMatchObject({
      iss: ISSUER,
      sub: client.clientId,
      client_id: client.clientId,
      aud: MCP,
    });
    expect(payload.grant_id).toBeUndefined();
    expect(payload["https://hasura.io/jwt/claims"]).toBeUndefined();
    const introspection = await postForm(
      svc,
      "/oauth2/introspect",
      { token: tokens.access_token },
      basic(client),
    );
    expect(await introspection.json()).toMatchObject({ active: true, sub: client.clientId, aud: MCP });
    // Not a person's token: userinfo has nobody to describe.
    await oauth2Error(await svc.get("/oauth2/userinfo", tokens.access_token), 401, "invalid_token");
  });

  // What docs/mcp.md tells a resource server to check (RFC 9068 §2.2, §5: a client's `sub` must not collide with a
  // person's).
  it("a resource server tells a machine token from a person's: gty client_credentials and sub = client_id", async () => {
    const client = await machine();
    const machineToken = decodeJwt(((await (await credentials(client)).json()) as TokenAnswer).access_token);
    expect(machineToken.payload).toMatchObject({ gty: "client_credentials", sub: client.clientId });
    const { tokens } = await grantFor(svc);
    const person = decodeJwt(tokens.access_token).payload;
    expect(person.gty).toBeUndefined();
    expect(person.sub).not.toBe(person.client_id);
    expect(person.grant_id).toEqual(expect.any(String));
  });

  it("without a resource the token is for the client itself", async () => {
    const client = await machine();
    const tokens = (await (await credentials(client)).json()) as TokenAnswer;
    expect(decodeJwt(tokens.access_token).payload.aud).toBe(client.clientId);
  });

  it("refuses person scopes, unknown resources, a wrong secret and clients not allowed the grant", async () => {
    const client = await machine();
    await oauth2Error(await credentials(client, { scope: "openid" }), 400, "invalid_scope");
    await oauth2Error(await credentials(client, { scope: "graphql" }), 400, "invalid_scope");
    await oauth2Error(
      await credentials(client, { resource: "https://other.example" }),
      400,
      "invalid_target",
    );
    await oauth2Error(await credentials({ ...client, clientSecret: "ocs_wrong" }), 401, "invalid_client");
    const webApp = await newClient(svc);
    await oauth2Error(await credentials(webApp), 400, "unauthorized_client");
  });

  it("a public client can never use it: refused at the token endpoint and when an admin configures it", async () => {
    const spa = await newClient(svc, { tokenEndpointAuthMethod: "none" });
    const response = await postForm(svc, "/oauth2/token", {
      grant_type: "client_credentials",
      client_id: spa.clientId,
    });
    await oauth2Error(response, 400, "unauthorized_client");
    const refused = await svc.request("POST", "/admin/oauth2/clients", {
      headers: { "x-hasura-admin-secret": String(svc.env.AUTH_ADMIN_SECRET) },
      json: { clientName: "x", grantTypes: ["client_credentials"], tokenEndpointAuthMethod: "none" },
    });
    expect(refused.status).toBe(400);
  });

  it("its token stops being active at introspection once the client is deleted", async () => {
    const client = await machine();
    const other = await machine();
    const tokens = (await (await credentials(client)).json()) as TokenAnswer;
    // Another client learns nothing about it.
    const byOther = await postForm(svc, "/oauth2/introspect", { token: tokens.access_token }, basic(other));
    expect(await byOther.json()).toEqual({ active: false });
    const deleted = await svc.request("DELETE", `/admin/oauth2/clients/${client.clientId}`, {
      headers: { "x-hasura-admin-secret": String(svc.env.AUTH_ADMIN_SECRET) },
    });
    expect(deleted.status).toBe(204);
    await oauth2Error(
      await postForm(svc, "/oauth2/introspect", { token: tokens.access_token }, basic(client)),
      401,
      "invalid_client",
    );
  });
});
