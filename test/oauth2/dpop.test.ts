// DPoP (RFC 9449, contract §12) end to end with openid-client 6, a certified relying-party library, through the real
// HTTP surface: every grant (code, refresh, device, client_credentials) gets DPoP-bound tokens when its request
// carries a proof; a public client's refresh token is bound to its key; `dpop_jkt` binds the code; userinfo and
// introspection see the binding; the server nonce makes its round trip. Threat behind the whole feature: a stolen
// access or refresh token (a log, a proxy, a leaky browser extension) is worthless without the client's private key.
import * as oidc from "openid-client";
import { describe, expect, it } from "vitest";
import { decodeJwt, signUp, uniqueEmail } from "../helpers";
import {
  callbackOf,
  DEVICE_GRANT,
  dpopKeyPair,
  proof,
  proofKey,
  relyingParty,
  TOKEN_ENDPOINT,
} from "./dpop-support";
import { Browser, signIn } from "./page-browser";
import { basic, location, newClient, oauth2Error, postForm, provider } from "./support";

const svc = provider();

const publicClient = () => newClient(svc, { clientName: "DPoP SPA", tokenEndpointAuthMethod: "none" });
const confidentialClient = (extra: Record<string, unknown> = {}) =>
  newClient(svc, { clientName: "DPoP web app", ...extra });

describe("DPoP in discovery", () => {
  it("advertises the proof algorithms it accepts (RFC 9449 §5.1)", async () => {
    const config = await relyingParty(svc, await publicClient());
    expect(config.serverMetadata().dpop_signing_alg_values_supported).toEqual(
      expect.arrayContaining(["ES256", "PS256", "EdDSA"]),
    );
    expect(config.serverMetadata().dpop_signing_alg_values_supported).not.toContain("RS256");
  });
});

describe("the code flow with DPoP (openid-client)", () => {
  it("public client: DPoP-bound tokens, userinfo with a proof, refresh only with the same key", async () => {
    const client = await publicClient();
    const config = await relyingParty(svc, client);
    const session = await signUp(svc);
    const { pair, jkt } = await dpopKeyPair();
    const DPoP = oidc.getDPoPHandle(config, pair);
    const { callback, checks } = await callbackOf(svc, config, session);

    const tokens = await oidc.authorizationCodeGrant(config, callback, checks, undefined, { DPoP });
    expect(tokens.token_type).toBe("dpop");
    expect(decodeJwt(tokens.access_token).payload.cnf).toEqual({ jkt });
    const info = await oidc.fetchUserInfo(config, tokens.access_token, session.user.id, { DPoP });
    expect(info.sub).toBe(session.user.id);

    // Threat: a refresh token stolen from a public client (which has no secret) used with the thief's key. It is
    // refused before rotating: the client's own next refresh still works with the same token.
    const thief = oidc.getDPoPHandle(config, (await dpopKeyPair()).pair);
    await expect(
      oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: thief }),
    ).rejects.toMatchObject({ error: "invalid_dpop_proof", status: 400 });
    // …and without any proof (a plain bearer refresh): invalid_grant, the token's own error (FAPI 2.0's suite).
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: "invalid_grant",
    });
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
    expect(refreshed.token_type).toBe("dpop");
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(decodeJwt(refreshed.access_token).payload.cnf).toEqual({ jkt });
    // The successor is bound as its predecessor was.
    await expect(
      oidc.refreshTokenGrant(config, refreshed.refresh_token!, undefined, { DPoP: thief }),
    ).rejects.toMatchObject({ error: "invalid_dpop_proof" });
  });

  it("confidential client: may change keys on refresh (RFC 9449 §5); introspection reports the binding", async () => {
    const client = await confidentialClient();
    const config = await relyingParty(svc, client);
    const session = await signUp(svc);
    const first = await dpopKeyPair();
    const { callback, checks } = await callbackOf(svc, config, session);
    const tokens = await oidc.authorizationCodeGrant(config, callback, checks, undefined, {
      DPoP: oidc.getDPoPHandle(config, first.pair),
    });
    expect(await oidc.tokenIntrospection(config, tokens.access_token)).toMatchObject({
      active: true,
      token_type: "DPoP",
      cnf: { jkt: first.jkt },
    });

    const second = await dpopKeyPair("EdDSA");
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, {
      DPoP: oidc.getDPoPHandle(config, second.pair),
    });
    expect(decodeJwt(refreshed.access_token).payload.cnf).toEqual({ jkt: second.jkt });
    // Without a proof the same grant gives a bearer token: the client authenticated, and asked for none.
    const bearer = await oidc.refreshTokenGrant(config, refreshed.refresh_token!);
    expect(bearer.token_type).toBe("bearer");
    expect(decodeJwt(bearer.access_token).payload.cnf).toBeUndefined();
    expect(await oidc.tokenIntrospection(config, bearer.access_token)).toMatchObject({
      active: true,
      token_type: "Bearer",
    });
  });

  it("dpop_jkt binds the code to a key (RFC 9449 §10): redeemed with that key, refused with another", async () => {
    const client = await publicClient();
    const config = await relyingParty(svc, client);
    const session = await signUp(svc);
    const { pair, jkt } = await dpopKeyPair();
    const DPoP = oidc.getDPoPHandle(config, pair);

    const bound = await callbackOf(svc, config, session, { dpop_jkt: jkt });
    const tokens = await oidc.authorizationCodeGrant(config, bound.callback, bound.checks, undefined, {
      DPoP,
    });
    expect(decodeJwt(tokens.access_token).payload.cnf).toEqual({ jkt });

    // Threat: an authorization code intercepted on its way back (a malicious app on the same redirect scheme) and
    // redeemed with the attacker's key, or with none.
    const other = oidc.getDPoPHandle(config, (await dpopKeyPair()).pair);
    const stolen = await callbackOf(svc, config, session, { dpop_jkt: jkt });
    await expect(
      oidc.authorizationCodeGrant(config, stolen.callback, stolen.checks, undefined, { DPoP: other }),
    ).rejects.toMatchObject({ error: "invalid_dpop_proof" });
    const unproven = await callbackOf(svc, config, session, { dpop_jkt: jkt });
    await expect(
      oidc.authorizationCodeGrant(config, unproven.callback, unproven.checks),
    ).rejects.toMatchObject({
      error: "invalid_grant",
    });
  });

  it("a malformed dpop_jkt goes back to the client as invalid_request", async () => {
    const client = await publicClient();
    const config = await relyingParty(svc, client);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: "https://rp.example.com/callback",
      scope: "openid",
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: "S256",
      dpop_jkt: "not-a-thumbprint",
    });
    const back = location(await svc.request("GET", url.href));
    expect(back.searchParams.get("error")).toBe("invalid_request");
    expect(back.searchParams.get("error_description")).toContain("dpop_jkt");
  });
});

describe("the other grants with DPoP", () => {
  it("device grant (RFC 8628): the device's proof binds its tokens and its refresh token", async () => {
    const client = await newClient(svc, {
      clientName: "DPoP CLI",
      tokenEndpointAuthMethod: "none",
      grantTypes: [DEVICE_GRANT, "refresh_token"],
      redirectUris: [],
    });
    const config = await relyingParty(svc, client);
    const email = uniqueEmail();
    const { user } = await signUp(svc, email);
    const { pair, jkt } = await dpopKeyPair();
    const DPoP = oidc.getDPoPHandle(config, pair);
    const device = await oidc.initiateDeviceAuthorization(config, { scope: "openid offline_access" });

    const browser = new Browser(svc);
    const entered = await browser.post("/oauth2/device", { user_code: device.user_code });
    const page = location(entered);
    const requestId = page.searchParams.get("request_id")!;
    await browser.get(page.toString());
    await signIn(browser, requestId, email);
    const approved = await browser.post("/oauth2/interaction/consent", {
      request_id: requestId,
      decision: "allow",
    });
    expect(approved.status).toBe(200);

    // The poll itself (openid-client's poller waits the interval first; one request is all the test needs).
    const tokens = await oidc.genericGrantRequest(
      config,
      DEVICE_GRANT,
      { device_code: device.device_code },
      { DPoP },
    );
    expect(tokens.token_type).toBe("dpop");
    expect(decodeJwt(tokens.access_token).payload).toMatchObject({ sub: user.id, cnf: { jkt } });
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: "invalid_grant",
    });
    expect(
      (await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP })).token_type,
    ).toBe("dpop");
  });

  it("client_credentials: a machine's token bound to its key", async () => {
    const client = await confidentialClient({ grantTypes: ["client_credentials"], redirectUris: [] });
    const config = await relyingParty(svc, client);
    const { pair, jkt } = await dpopKeyPair("PS256");
    const tokens = await oidc.clientCredentialsGrant(config, {}, { DPoP: oidc.getDPoPHandle(config, pair) });
    expect(tokens.token_type).toBe("dpop");
    expect(decodeJwt(tokens.access_token).payload).toMatchObject({ sub: client.clientId, cnf: { jkt } });
    expect(await oidc.tokenIntrospection(config, tokens.access_token)).toMatchObject({
      active: true,
      token_type: "DPoP",
      cnf: { jkt },
    });
  });
});

describe("clients registered as DPoP-bound", () => {
  it("get no bearer token: a request without a proof is refused (invalid_grant), one with a proof is served", async () => {
    const client = await confidentialClient({
      grantTypes: ["client_credentials"],
      redirectUris: [],
      dpopBoundAccessTokens: true,
    });
    await oauth2Error(
      await postForm(svc, "/oauth2/token", { grant_type: "client_credentials" }, basic(client)),
      400,
      "invalid_grant",
    );
    const key = await proofKey();
    const response = await postForm(
      svc,
      "/oauth2/token",
      { grant_type: "client_credentials" },
      { ...basic(client), dpop: await proof(key, "POST", TOKEN_ENDPOINT) },
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ token_type: "DPoP" });
  });
});

describe("server nonces (AUTH_OAUTH2_PROVIDER_DPOP_NONCE, RFC 9449 §8, §9)", () => {
  const nonces = provider({ AUTH_OAUTH2_PROVIDER_DPOP_NONCE: "true" });

  it("openid-client retries once with the nonce, at the token endpoint and at userinfo", async () => {
    const client = await newClient(nonces, { clientName: "Nonce SPA", tokenEndpointAuthMethod: "none" });
    const seen: { status: number; error?: string }[] = [];
    const config = await relyingParty(nonces, client, seen);
    const session = await signUp(nonces);
    const DPoP = oidc.getDPoPHandle(config, (await dpopKeyPair()).pair);
    const { callback, checks } = await callbackOf(nonces, config, session);

    seen.length = 0;
    const tokens = await oidc.authorizationCodeGrant(config, callback, checks, undefined, { DPoP });
    expect(tokens.token_type).toBe("dpop");
    expect(seen).toEqual([{ status: 400, error: "use_dpop_nonce" }, { status: 200 }]);

    // The handle kept the nonce of the last answer: userinfo and the refresh need no second round trip.
    seen.length = 0;
    expect((await oidc.fetchUserInfo(config, tokens.access_token, session.user.id, { DPoP })).sub).toBe(
      session.user.id,
    );
    await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
    expect(seen).toEqual([{ status: 200 }, { status: 200 }]);
  });

  it("sends DPoP-Nonce on every token answer, errors included, and refuses a proof with a made-up nonce", async () => {
    const client = await newClient(nonces, { grantTypes: ["client_credentials"], redirectUris: [] });
    const key = await proofKey();
    const withProof = async (claims: Record<string, unknown>) =>
      postForm(
        nonces,
        "/oauth2/token",
        { grant_type: "client_credentials" },
        { ...basic(client), dpop: await proof(key, "POST", TOKEN_ENDPOINT, { claims }) },
      );
    const bearer = await postForm(
      nonces,
      "/oauth2/token",
      { grant_type: "client_credentials" },
      basic(client),
    );
    expect(bearer.status).toBe(200);
    const nonce = bearer.headers.get("dpop-nonce");
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);

    const made = await withProof({ nonce: "A".repeat(22) });
    await oauth2Error(made, 400, "use_dpop_nonce");
    expect(made.headers.get("dpop-nonce")).toBe(nonce);
    const good = await withProof({ nonce });
    expect(good.status).toBe(200);
    expect(good.headers.get("dpop-nonce")).toBe(nonce);
  });

  it("without nonces switched on, answers carry no DPoP-Nonce and a proof needs none", async () => {
    const client = await confidentialClient({ grantTypes: ["client_credentials"], redirectUris: [] });
    const seen: { status: number; error?: string }[] = [];
    const config = await relyingParty(svc, client, seen);
    seen.length = 0;
    await oidc.clientCredentialsGrant(
      config,
      {},
      { DPoP: oidc.getDPoPHandle(config, (await dpopKeyPair()).pair) },
    );
    expect(seen).toEqual([{ status: 200 }]);
    const response = await postForm(
      svc,
      "/oauth2/token",
      { grant_type: "client_credentials" },
      basic(client),
    );
    expect(response.headers.get("dpop-nonce")).toBeNull();
  });
});

describe("without a proof nothing changes", () => {
  it("a bearer code flow still answers token_type Bearer, no cnf, and userinfo takes it as Bearer", async () => {
    const client = await publicClient();
    const seen: { status: number; error?: string }[] = [];
    const config = await relyingParty(svc, client, seen);
    const session = await signUp(svc);
    const { callback, checks } = await callbackOf(svc, config, session);
    const tokens = await oidc.authorizationCodeGrant(config, callback, checks);
    expect(tokens.token_type).toBe("bearer");
    expect(decodeJwt(tokens.access_token).payload.cnf).toBeUndefined();
    expect((await oidc.fetchUserInfo(config, tokens.access_token, session.user.id)).sub).toBe(
      session.user.id,
    );
    expect(seen.every((answer) => answer.status === 200)).toBe(true);
  });
});
