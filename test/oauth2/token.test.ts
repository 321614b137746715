// The token endpoint (contract §3.5, RFC 6749 §4.1.3, §5, §6). Threats: a stolen code replayed (RFC 9700 §4.2.4:
// the tokens it issued are revoked), two exchanges racing with one code, a code redeemed by another client or with
// another redirect URI, PKCE bypass, client impersonation (a wrong secret, the secret in an unregistered place),
// and a stolen refresh token (rotation, family revocation on replay).
import { describe, expect, it } from "vitest";
import { auditTypesOf, decodeJwt, signUp } from "../helpers";
import { userD1 } from "../support/shards";
import {
  basic,
  codeFor,
  exchange,
  grantFor,
  ISSUER,
  newClient,
  oauth2Error,
  postForm,
  provider,
  REDIRECT_URI,
  s256,
  type TokenAnswer,
  VERIFIER,
} from "./support";

const svc = provider();

const refresh = (client: { clientId: string; clientSecret?: string }, refreshToken: string, extra = {}) =>
  postForm(
    svc,
    "/oauth2/token",
    { grant_type: "refresh_token", refresh_token: refreshToken, ...extra },
    client.clientSecret ? basic(client as never) : {},
  );

const introspect = (client: { clientId: string; clientSecret?: string }, token: string) =>
  postForm(svc, "/oauth2/introspect", { token }, basic(client as never)).then(
    (r) => r.json() as Promise<{ active: boolean }>,
  );

describe("authorization_code", () => {
  it("answers tokens with no-store, an at+jwt access token for the client and an ID token with nonce, at_hash and auth_time", async () => {
    const client = await newClient(svc);
    const session = await signUp(svc);
    const challenge = await s256(VERIFIER);
    const { code } = await codeFor(svc, client, session, {
      scope: "openid profile email offline_access graphql",
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    const response = await exchange(svc, client, code, { code_verifier: VERIFIER });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("pragma")).toBe("no-cache");
    const tokens = (await response.json()) as TokenAnswer;
    expect(tokens).toEqual({
      access_token: expect.any(String),
      token_type: "Bearer",
      expires_in: 900,
      refresh_token: expect.stringMatching(/^ort_/),
      id_token: expect.any(String),
      scope: "openid profile email offline_access graphql",
    });
    const access = decodeJwt(tokens.access_token);
    expect(access.header).toMatchObject({ alg: "RS256", typ: "at+jwt", kid: expect.any(String) });
    expect(access.payload).toMatchObject({
      iss: ISSUER,
      sub: session.user.id,
      aud: client.clientId,
      client_id: client.clientId,
      scope: "openid profile email offline_access graphql",
      jti: expect.any(String),
      grant_id: expect.stringMatching(/^og_/),
      "https://hasura.io/jwt/claims": expect.objectContaining({ "x-hasura-user-id": session.user.id }),
    });
    expect((access.payload.exp as number) - (access.payload.iat as number)).toBe(900);
    const id = decodeJwt(tokens.id_token!);
    expect(id.header).toMatchObject({ alg: "RS256", typ: "JWT", kid: access.header.kid });
    expect(id.payload).toMatchObject({
      iss: ISSUER,
      sub: session.user.id,
      aud: client.clientId,
      nonce: "n-1",
      email: session.user.email,
      email_verified: false,
      locale: "en",
      auth_time: expect.any(Number),
      at_hash: expect.any(String),
    });
    // The session API never takes an OAuth2 access token, even one that carries Hasura claims.
    expect((await svc.get("/user", tokens.access_token)).status).toBe(401);
  });

  it("leaves Hasura claims out without the graphql scope, and the ID token out without openid", async () => {
    const { tokens } = await grantFor(svc, undefined, "email offline_access");
    expect(tokens.id_token).toBeUndefined();
    expect(decodeJwt(tokens.access_token).payload["https://hasura.io/jwt/claims"]).toBeUndefined();
  });

  it("gives one of two parallel exchanges of a code the tokens, and revokes them when the code comes back later", async () => {
    const client = await newClient(svc);
    const session = await signUp(svc);
    const { code } = await codeFor(svc, client, session);
    const [a, b] = await Promise.all([exchange(svc, client, code), exchange(svc, client, code)]);
    expect([a.status, b.status].sort()).toEqual([200, 400]);
    const tokens = (await (a.status === 200 ? a : b).json()) as TokenAnswer;
    expect((await introspect(client, tokens.access_token)).active).toBe(true);

    await oauth2Error(await exchange(svc, client, code), 400, "invalid_grant");
    expect((await introspect(client, tokens.access_token)).active).toBe(false);
    expect((await introspect(client, tokens.refresh_token!)).active).toBe(false);
    await oauth2Error(await refresh(client, tokens.refresh_token!), 400, "invalid_grant");
  });

  it("refuses a code for another client, another redirect URI, a wrong or missing verifier, or an unasked-for verifier", async () => {
    const client = await newClient(svc, { redirectUris: [REDIRECT_URI, "https://rp.example.com/other"] });
    const other = await newClient(svc);
    const session = await signUp(svc);
    const pkce = { code_challenge: await s256(VERIFIER), code_challenge_method: "S256" };
    const cases: [Awaited<ReturnType<typeof codeFor>>["code"], (code: string) => Promise<Response>][] = [
      [
        (await codeFor(svc, client, session, pkce)).code,
        (code) => exchange(svc, other, code, { code_verifier: VERIFIER }),
      ],
      [
        (await codeFor(svc, client, session, pkce)).code,
        (code) =>
          exchange(svc, client, code, {
            code_verifier: VERIFIER,
            redirect_uri: "https://rp.example.com/other",
          }),
      ],
      [
        (await codeFor(svc, client, session, pkce)).code,
        (code) => exchange(svc, client, code, { code_verifier: `${VERIFIER}x` }),
      ],
      [(await codeFor(svc, client, session, pkce)).code, (code) => exchange(svc, client, code)],
      [
        (await codeFor(svc, client, session)).code,
        (code) => exchange(svc, client, code, { code_verifier: VERIFIER }),
      ],
    ];
    for (const [code, attempt] of cases) await oauth2Error(await attempt(code), 400, "invalid_grant");
    await oauth2Error(await exchange(svc, client, "oac_made-up"), 400, "invalid_grant");
  });

  it("authenticates clients: wrong secret → 401 with a challenge, secret in two places → invalid_request, unregistered method → 401", async () => {
    const client = await newClient(svc);
    const postClient = await newClient(svc, { tokenEndpointAuthMethod: "client_secret_post" });
    const session = await signUp(svc);
    const { code } = await codeFor(svc, client, session);
    const grant = { grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI };

    const wrong = await postForm(svc, "/oauth2/token", grant, basic(client, "ocs_wrong"));
    await oauth2Error(wrong, 401, "invalid_client");
    expect(wrong.headers.get("www-authenticate")).toMatch(/^Basic/);
    const both = await postForm(
      svc,
      "/oauth2/token",
      { ...grant, client_secret: client.clientSecret },
      basic(client),
    );
    await oauth2Error(both, 400, "invalid_request");
    // A Basic client's secret in the form, a post client's in Basic, a confidential client with no secret at all.
    await oauth2Error(
      await postForm(svc, "/oauth2/token", {
        ...grant,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      }),
      401,
      "invalid_client",
    );
    await oauth2Error(await postForm(svc, "/oauth2/token", grant, basic(postClient)), 401, "invalid_client");
    await oauth2Error(
      await postForm(svc, "/oauth2/token", { ...grant, client_id: client.clientId }),
      401,
      "invalid_client",
    );
    await oauth2Error(await postForm(svc, "/oauth2/token", grant), 401, "invalid_client");
    // None of those attempts consumed the code.
    expect((await exchange(svc, client, code)).status).toBe(200);

    // The post method works for a post client; JSON bodies and unknown grant types are refused.
    const { code: postCode } = await codeFor(svc, postClient, session);
    const viaPost = await postForm(svc, "/oauth2/token", {
      ...grant,
      code: postCode,
      client_id: postClient.clientId,
      client_secret: postClient.clientSecret,
    });
    expect(viaPost.status).toBe(200);
    const json = await svc.request("POST", "/oauth2/token", { json: grant, headers: basic(client) });
    await oauth2Error(json, 400, "invalid_request");
    await oauth2Error(
      await postForm(svc, "/oauth2/token", { grant_type: "password" }, basic(client)),
      400,
      "unsupported_grant_type",
    );
  });

  it("lets a public client exchange with client_id and its verifier only", async () => {
    const client = await newClient(svc, { tokenEndpointAuthMethod: "none" });
    expect(client.clientSecret).toBeUndefined();
    const { tokens } = await grantFor(svc, client);
    expect(tokens.refresh_token).toMatch(/^ort_/);
  });

  it("refuses the code of a user disabled since", async () => {
    const client = await newClient(svc);
    const session = await signUp(svc);
    const { code } = await codeFor(svc, client, session);
    await userD1(session.user.id)
      .prepare("UPDATE users SET disabled = 1 WHERE id = ?")
      .bind(session.user.id)
      .run();
    await oauth2Error(await exchange(svc, client, code), 400, "invalid_grant");
  });
});

describe("refresh_token", () => {
  it("rotates, hands the same successor to a duplicate inside the grace window, and narrows scopes only", async () => {
    const { client, tokens } = await grantFor(svc);
    const first = await refresh(client, tokens.refresh_token!);
    expect(first.status).toBe(200);
    const rotated = (await first.json()) as TokenAnswer;
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    expect(rotated.id_token).toBeDefined();
    const duplicate = (await (await refresh(client, tokens.refresh_token!)).json()) as TokenAnswer;
    expect(duplicate.refresh_token).toBe(rotated.refresh_token);

    const narrowed = (await (
      await refresh(client, rotated.refresh_token!, { scope: "openid email" })
    ).json()) as TokenAnswer;
    expect(narrowed.scope).toBe("openid email");
    await oauth2Error(
      await refresh(client, narrowed.refresh_token!, { scope: "openid graphql" }),
      400,
      "invalid_scope",
    );
  });

  it("refuses a wider scope before rotating: the presented token still refreshes afterwards", async () => {
    // Threat (availability): a refresh refused for its scope had already rotated the token, so the client's retry
    // with its only token was a replay that revoked the whole grant.
    const strict = provider({ AUTH_REFRESH_TOKEN_REUSE_INTERVAL: "0" });
    const { client, tokens } = await grantFor(strict);
    const again = (body: Record<string, string>) => postForm(strict, "/oauth2/token", body, basic(client));
    await oauth2Error(
      await again({
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token!,
        scope: "openid graphql",
      }),
      400,
      "invalid_scope",
    );
    const retried = await again({ grant_type: "refresh_token", refresh_token: tokens.refresh_token! });
    expect(retried.status).toBe(200);
  });

  it("revokes the grant when an old refresh token is replayed after the grace window", async () => {
    const strict = provider({ AUTH_REFRESH_TOKEN_REUSE_INTERVAL: "0" });
    const { client, tokens, session } = await grantFor(strict);
    const again = (body: Record<string, string>) => postForm(strict, "/oauth2/token", body, basic(client));
    const first = (await (
      await again({ grant_type: "refresh_token", refresh_token: tokens.refresh_token! })
    ).json()) as TokenAnswer;
    await new Promise((resolve) => setTimeout(resolve, 5));
    await oauth2Error(
      await again({ grant_type: "refresh_token", refresh_token: tokens.refresh_token! }),
      400,
      "invalid_grant",
    );
    // The whole family is gone: the current token too, and the grant's access tokens.
    await oauth2Error(
      await again({ grant_type: "refresh_token", refresh_token: first.refresh_token! }),
      400,
      "invalid_grant",
    );
    const status = await postForm(strict, "/oauth2/introspect", { token: first.access_token }, basic(client));
    expect(await status.json()).toEqual({ active: false });
    expect(await auditTypesOf(session.user.id)).toContain("oauth2.grant-revoked");
  });

  it("does not let one client use another's refresh token, nor a made-up one revoke anything", async () => {
    const { client, tokens } = await grantFor(svc);
    const other = await newClient(svc);
    await oauth2Error(await refresh(other, tokens.refresh_token!), 400, "invalid_grant");
    await oauth2Error(await refresh(client, `ort_${"A".repeat(43)}`), 400, "invalid_grant");
    expect((await refresh(client, tokens.refresh_token!)).status).toBe(200);
  });
});
