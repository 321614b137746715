// Introspection (RFC 7662), revocation (RFC 7009) and userinfo (contract §3.5). Threats: one client learning about
// or revoking another client's tokens, a session token (or an ID token) used as an OAuth2 access token, and access
// tokens of a revoked grant still honoured (revocation, client deletion, disabled user, password reset).
import { describe, expect, it } from "vitest";
import { signUp } from "../helpers";
import { allInShards, userD1 } from "../support/shards";
import { basic, grantFor, newClient, oauth2Error, postForm, provider } from "./support";

const svc = provider();
const ADMIN = { "x-hasura-admin-secret": String(svc.env.AUTH_ADMIN_SECRET) };

const introspect = (client: Parameters<typeof basic>[0], token: string, extra: Record<string, string> = {}) =>
  postForm(svc, "/oauth2/introspect", { token, ...extra }, basic(client));
const revoke = (client: Parameters<typeof basic>[0], token: string) =>
  postForm(svc, "/oauth2/revoke", { token }, basic(client));
const userinfo = (token: string, method = "GET") =>
  svc.request(method, "/oauth2/userinfo", { headers: { authorization: `Bearer ${token}` } });

describe("introspection", () => {
  it("describes the caller's own access and refresh tokens, and nothing of another client's", async () => {
    const { client, session, tokens } = await grantFor(svc);
    const access = await introspect(client, tokens.access_token);
    expect(access.headers.get("cache-control")).toBe("no-store");
    expect(await access.json()).toEqual({
      active: true,
      client_id: client.clientId,
      exp: expect.any(Number),
      iat: expect.any(Number),
      iss: expect.stringContaining("/auth/v1"),
      scope: "openid profile email offline_access",
      sub: session.user.id,
      token_type: "Bearer",
      aud: client.clientId,
      jti: expect.any(String),
      // Contract §12: the grant's sign-in (here an API password session's, through the login step).
      auth_time: expect.any(Number),
      acr: "urn:edge-auth:acr:pwd",
      amr: ["pwd"],
    });
    expect(
      await (await introspect(client, tokens.refresh_token!, { token_type_hint: "refresh_token" })).json(),
    ).toMatchObject({
      active: true,
      token_type: "refresh_token",
      sub: session.user.id,
    });
    const other = await newClient(svc);
    expect(await (await introspect(other, tokens.access_token)).json()).toEqual({ active: false });
    expect(await (await introspect(other, tokens.refresh_token!)).json()).toEqual({ active: false });
    expect(await (await introspect(client, session.accessToken)).json()).toEqual({ active: false });
    expect(await (await introspect(client, "garbage")).json()).toEqual({ active: false });
  });

  it("requires client authentication and a token", async () => {
    const { client, tokens } = await grantFor(svc);
    await oauth2Error(
      await postForm(svc, "/oauth2/introspect", { token: tokens.access_token }),
      401,
      "invalid_client",
    );
    await oauth2Error(await postForm(svc, "/oauth2/introspect", {}, basic(client)), 400, "invalid_request");
  });

  it("shows a rotated-out refresh token as inactive", async () => {
    const { client, tokens } = await grantFor(svc);
    const rotated = await postForm(
      svc,
      "/oauth2/token",
      { grant_type: "refresh_token", refresh_token: tokens.refresh_token! },
      basic(client),
    );
    expect(rotated.status).toBe(200);
    expect(await (await introspect(client, tokens.refresh_token!)).json()).toEqual({ active: false });
  });
});

describe("revocation", () => {
  it("answers an empty 200 for unknown and foreign tokens, and leaves those grants alone", async () => {
    const { client, tokens } = await grantFor(svc);
    const other = await newClient(svc);
    for (const response of [
      await revoke(other, tokens.refresh_token!),
      await revoke(other, tokens.access_token),
      await revoke(client, "unknown"),
    ]) {
      expect(response.status).toBe(200);
      expect(await response.text()).toBe("");
    }
    expect(await (await introspect(client, tokens.access_token)).json()).toMatchObject({ active: true });
  });

  it("ends the grant when its refresh token is revoked: its access tokens and refresh tokens stop", async () => {
    const { client, tokens } = await grantFor(svc);
    expect((await revoke(client, tokens.refresh_token!)).status).toBe(200);
    expect(await (await introspect(client, tokens.access_token)).json()).toEqual({ active: false });
    await oauth2Error(await userinfo(tokens.access_token), 401, "invalid_token");
    const again = await postForm(
      svc,
      "/oauth2/token",
      { grant_type: "refresh_token", refresh_token: tokens.refresh_token! },
      basic(client),
    );
    await oauth2Error(again, 400, "invalid_grant");
  });

  it("ends the grant when its access token is revoked", async () => {
    const { client, tokens } = await grantFor(svc);
    expect((await revoke(client, tokens.access_token)).status).toBe(200);
    expect(await (await introspect(client, tokens.refresh_token!)).json()).toEqual({ active: false });
  });
});

describe("userinfo", () => {
  it("answers the claims of the token's scopes, by GET and by POST", async () => {
    const { session, tokens } = await grantFor(svc, undefined, "openid email");
    for (const method of ["GET", "POST"]) {
      const response = await userinfo(tokens.access_token, method);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        sub: session.user.id,
        email: session.user.email,
        email_verified: false,
      });
    }
    const profile = await grantFor(svc, undefined, "openid profile phone");
    expect(await (await userinfo(profile.tokens.access_token)).json()).toEqual({
      sub: profile.session.user.id,
      name: profile.session.user.email,
      locale: "en",
    });
  });

  it("refuses a session access token, an ID token and garbage with 401 invalid_token and a Bearer challenge", async () => {
    const { session, tokens } = await grantFor(svc);
    for (const token of [session.accessToken, tokens.id_token!, "garbage"]) {
      const response = await userinfo(token);
      await oauth2Error(response, 401, "invalid_token");
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token"/);
    }
    await oauth2Error(await svc.get("/oauth2/userinfo"), 401, "invalid_token");
    const noOpenid = await grantFor(svc, undefined, "email");
    await oauth2Error(await userinfo(noOpenid.tokens.access_token), 403, "insufficient_scope");
  });
});

describe("CORS and rate limits", () => {
  it("lets a browser app on any origin call the token-using endpoints, without credentials; not the authorize endpoint", async () => {
    const preflight = (path: string) =>
      svc.request("OPTIONS", path, {
        headers: { origin: "https://spa.example.net", "access-control-request-method": "POST" },
      });
    for (const path of [
      "/oauth2/token",
      "/oauth2/userinfo",
      "/oauth2/revoke",
      "/oauth2/introspect",
      "/oauth2/jwks",
    ]) {
      expect((await preflight(path)).headers.get("access-control-allow-origin"), path).toBe("*");
    }
    for (const path of ["/oauth2/authorize", "/oauth2/interaction/sign-in", "/oauth2/login", "/user"]) {
      expect((await preflight(path)).headers.get("access-control-allow-origin"), path).toBeNull();
    }
  });

  it("counts token and introspection requests in the OAUTH2 bucket", async () => {
    // The bucket's address count is its Rate Limiting binding; this stand-in lets two requests through.
    let counted = 0;
    const limited = provider({
      AUTH_RATE_LIMIT_ENABLE: "true",
      OAUTH2_LIMITER: { limit: async () => ({ success: ++counted <= 2 }) },
    });
    const ip = { "cf-connecting-ip": `203.0.113.${Math.floor(Math.random() * 250)}` };
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      const response = await limited.request("POST", "/oauth2/introspect", {
        body: "token=x",
        headers: { "content-type": "application/x-www-form-urlencoded", ...ip },
      });
      statuses.push(response.status);
      if (response.status === 429) expect(response.headers.get("retry-after")).toBeTruthy();
    }
    expect(statuses).toEqual([401, 401, 429]);
  });
});

describe("grants end with what they depend on", () => {
  it("ends every grant of a client deleted through the admin API", async () => {
    const { client, tokens } = await grantFor(svc);
    const deleted = await svc.request("DELETE", `/admin/oauth2/clients/${client.clientId}`, {
      headers: ADMIN,
    });
    expect(deleted.status).toBe(204);
    await oauth2Error(await userinfo(tokens.access_token), 401, "invalid_token");
    const rows = await allInShards("SELECT id FROM oauth2_grants WHERE client_id = ?", client.clientId);
    expect(rows).toEqual([]);
  });

  it("turns a disabled user's tokens inactive, and ends grants when the password changes", async () => {
    const disabled = await grantFor(svc);
    await userD1(disabled.session.user.id)
      .prepare("UPDATE users SET disabled = 1 WHERE id = ?")
      .bind(disabled.session.user.id)
      .run();
    expect(await (await introspect(disabled.client, disabled.tokens.access_token)).json()).toEqual({
      active: false,
    });
    await oauth2Error(await userinfo(disabled.tokens.access_token), 401, "invalid_token");

    const { client, session, tokens } = await grantFor(svc);
    const changed = await svc.post(
      "/user/password",
      { newPassword: "another long password" },
      session.accessToken,
    );
    expect(changed.status).toBe(200);
    expect(await (await introspect(client, tokens.access_token)).json()).toEqual({ active: false });
  });

  it("keeps grants of other users and clients when one is revoked", async () => {
    const a = await grantFor(svc);
    const b = await grantFor(svc, a.client);
    await revoke(a.client, a.tokens.refresh_token!);
    expect(await (await introspect(b.client, b.tokens.access_token)).json()).toMatchObject({ active: true });
    expect((await signUp(svc)).accessToken).toBeTruthy();
  });
});
