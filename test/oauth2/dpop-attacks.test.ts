// DPoP (RFC 9449) under attack, with hand-made proofs (jose) at the token endpoint and at userinfo. Each test names
// the threat it covers; RFC 9449 §11 is the threat model (a stolen token, a stolen or pre-computed proof, a proof
// replayed at another endpoint, a server tricked into trusting a key it was not shown).
import { describe, expect, it } from "vitest";
import type { WireClient } from "../../src/oauth2/clients";
import { signUp } from "../helpers";
import { ath, proof, proofKey, TOKEN_ENDPOINT, USERINFO_ENDPOINT } from "./dpop-support";
import {
  basic,
  codeFor,
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

const machine = () => newClient(svc, { grantTypes: ["client_credentials"], redirectUris: [] });

/** A client_credentials request with `dpop` as its DPoP header (the cheapest way to reach the token endpoint). */
const credentials = (client: WireClient, dpop: string) =>
  postForm(svc, "/oauth2/token", { grant_type: "client_credentials" }, { ...basic(client), dpop });

/** A public client's code flow whose exchange carries a proof by `key`: DPoP-bound access and refresh tokens. */
async function boundTokens(key: Awaited<ReturnType<typeof proofKey>>) {
  const client = await newClient(svc, { tokenEndpointAuthMethod: "none" });
  const session = await signUp(svc);
  const { code } = await codeFor(svc, client, session, {
    scope: "openid offline_access",
    code_challenge: await s256(VERIFIER),
    code_challenge_method: "S256",
  });
  const response = await postForm(
    svc,
    "/oauth2/token",
    {
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      client_id: client.clientId,
      code_verifier: VERIFIER,
    },
    { dpop: await proof(key, "POST", TOKEN_ENDPOINT) },
  );
  expect(response.status).toBe(200);
  return { client, tokens: (await response.json()) as TokenAnswer };
}

const userinfo = (token: string, headers: Record<string, string> = {}, scheme = "DPoP") =>
  svc.request("GET", "/oauth2/userinfo", { headers: { authorization: `${scheme} ${token}`, ...headers } });

/** A resource's refusal: 401, the error, and a DPoP challenge naming it (RFC 9449 §7.1). */
async function refusedAtResource(response: Response, error: string) {
  await oauth2Error(response, 401, error);
  expect(response.headers.get("www-authenticate")).toMatch(new RegExp(`^DPoP error="${error}"`));
}

describe("proofs at the token endpoint", () => {
  it("a replayed proof is refused (RFC 9449 §11.1): an eavesdropper cannot reuse a captured request", async () => {
    const client = await machine();
    const captured = await proof(await proofKey(), "POST", TOKEN_ENDPOINT);
    expect((await credentials(client, captured)).status).toBe(200);
    await oauth2Error(await credentials(client, captured), 400, "invalid_dpop_proof");
  });

  it("two parallel requests with one proof: exactly one succeeds (the jti is claimed atomically)", async () => {
    const client = await machine();
    const one = await proof(await proofKey(), "POST", TOKEN_ENDPOINT);
    const answers = await Promise.all([credentials(client, one), credentials(client, one)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400]);
  });

  it("a proof made for another URL or another method is refused: it cannot be replayed at another endpoint", async () => {
    const client = await machine();
    const key = await proofKey();
    await oauth2Error(
      await credentials(client, await proof(key, "POST", USERINFO_ENDPOINT)),
      400,
      "invalid_dpop_proof",
    );
    await oauth2Error(
      await credentials(client, await proof(key, "POST", "https://evil.example.com/auth/v1/oauth2/token")),
      400,
      "invalid_dpop_proof",
    );
    await oauth2Error(
      await credentials(client, await proof(key, "GET", TOKEN_ENDPOINT)),
      400,
      "invalid_dpop_proof",
    );
    // The query and fragment are not part of htu's comparison (RFC 9449 §4.3 item 9), the default port neither.
    expect((await credentials(client, await proof(key, "POST", `${TOKEN_ENDPOINT}?a=b#c`))).status).toBe(200);
    // Scheme and host compare case-insensitively (RFC 3986 §6.2.2.1); the path does not.
    const shouted = TOKEN_ENDPOINT.replace("http://localhost", "HTTP://LOCALHOST");
    expect((await credentials(client, await proof(key, "POST", shouted))).status).toBe(200);
    const otherPath = TOKEN_ENDPOINT.replace("/oauth2/token", "/OAUTH2/TOKEN");
    await oauth2Error(
      await credentials(client, await proof(key, "POST", otherPath)),
      400,
      "invalid_dpop_proof",
    );
  });

  it("an old or a future iat is refused: a proof computed in advance by someone who once had the key expires", async () => {
    const client = await machine();
    const key = await proofKey();
    const now = Math.floor(Date.now() / 1000);
    for (const iat of [now - 3600, now - 301, now + 3600, now + 120]) {
      await oauth2Error(
        await credentials(client, await proof(key, "POST", TOKEN_ENDPOINT, { claims: { iat } })),
        400,
        "invalid_dpop_proof",
      );
    }
    for (const iat of [now - 10, now + 10]) {
      expect(
        (await credentials(client, await proof(key, "POST", TOKEN_ENDPOINT, { claims: { iat } }))).status,
      ).toBe(200);
    }
  });

  it("a private key in the header is refused: the server never accepts a key whose secret was shown to others", async () => {
    const client = await machine();
    const key = await proofKey();
    const { exportJWK } = await import("jose");
    const leaked = { ...key, jwk: { ...(await exportJWK(key.privateKey)) } };
    expect(leaked.jwk.d).toBeDefined();
    await oauth2Error(
      await credentials(client, await proof(leaked, "POST", TOKEN_ENDPOINT)),
      400,
      "invalid_dpop_proof",
    );
  });

  it("alg none, HS256 and RS256 are refused: an unsigned proof, a shared secret, a weak padding prove no key", async () => {
    const client = await machine();
    const key = await proofKey();
    const valid = await proof(key, "POST", TOKEN_ENDPOINT);
    const [, payload] = valid.split(".");
    const encode = (value: object) =>
      btoa(JSON.stringify(value)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    const unsigned = `${encode({ typ: "dpop+jwt", alg: "none", jwk: key.jwk })}.${payload}.`;
    await oauth2Error(await credentials(client, unsigned), 400, "invalid_dpop_proof");

    const { SignJWT } = await import("jose");
    const secret = new TextEncoder().encode("a shared secret of thirty-two bytes!!");
    const hmac = await new SignJWT({
      htm: "POST",
      htu: TOKEN_ENDPOINT,
      iat: Math.floor(Date.now() / 1000),
      jti: crypto.randomUUID(),
    })
      .setProtectedHeader({ typ: "dpop+jwt", alg: "HS256", jwk: { kty: "oct", k: "c2VjcmV0" } } as never)
      .sign(secret);
    await oauth2Error(await credentials(client, hmac), 400, "invalid_dpop_proof");

    const rsa = await proofKey("RS256");
    await oauth2Error(
      await credentials(client, await proof(rsa, "POST", TOKEN_ENDPOINT)),
      400,
      "invalid_dpop_proof",
    );
    // An RSA key with PSS is fine (FAPI 2.0 §5.4 allows PS256).
    const pss = await proofKey("PS256");
    expect((await credentials(client, await proof(pss, "POST", TOKEN_ENDPOINT))).status).toBe(200);
  });

  it("a proof signed by another key than the one in its header is refused: the key shown must be the key used", async () => {
    const client = await machine();
    const [shown, used] = [await proofKey(), await proofKey()];
    const forged = await proof({ ...used, jwk: shown.jwk }, "POST", TOKEN_ENDPOINT);
    await oauth2Error(await credentials(client, forged), 400, "invalid_dpop_proof");
  });

  it("malformed proofs are a 400, never a 500: no typ, a wrong typ, no jti, an endless jti, no iat, garbage, two headers", async () => {
    const client = await machine();
    const key = await proofKey();
    const broken = [
      await proof(key, "POST", TOKEN_ENDPOINT, { header: { typ: undefined } }),
      await proof(key, "POST", TOKEN_ENDPOINT, { header: { typ: "jwt" } }),
      await proof(key, "POST", TOKEN_ENDPOINT, { header: { jwk: undefined } }),
      await proof(key, "POST", TOKEN_ENDPOINT, { claims: { jti: undefined } }),
      await proof(key, "POST", TOKEN_ENDPOINT, { claims: { jti: "j".repeat(300) } }),
      await proof(key, "POST", TOKEN_ENDPOINT, { claims: { iat: undefined } }),
      await proof(key, "POST", TOKEN_ENDPOINT, { claims: { htu: 42 } }),
      await proof(key, "POST", TOKEN_ENDPOINT, { claims: { htu: "not a url" } }),
      "not.a.jwt",
      "",
      "x".repeat(9000),
      `${await proof(key, "POST", TOKEN_ENDPOINT)}, ${await proof(key, "POST", TOKEN_ENDPOINT)}`,
    ];
    for (const dpop of broken) await oauth2Error(await credentials(client, dpop), 400, "invalid_dpop_proof");
  });
});

describe("DPoP-bound tokens at userinfo", () => {
  it("a bound access token sent as Bearer is refused: a stolen token is useless without the key", async () => {
    const key = await proofKey();
    const { tokens } = await boundTokens(key);
    const response = await userinfo(tokens.access_token, {}, "Bearer");
    await refusedAtResource(response, "invalid_token");
  });

  it("is served with a proof by the token's key, under any case of the scheme name (RFC 9110 §11.1)", async () => {
    const key = await proofKey();
    const { tokens } = await boundTokens(key);
    const with_ = async (scheme: string) =>
      userinfo(
        tokens.access_token,
        { dpop: await proof(key, "GET", USERINFO_ENDPOINT, { accessToken: tokens.access_token }) },
        scheme,
      );
    for (const scheme of ["DPoP", "dpop", "DPOP"]) expect((await with_(scheme)).status).toBe(200);
  });

  it("a wrong ath is refused: a proof made for another token cannot vouch for this one", async () => {
    const key = await proofKey();
    const { tokens } = await boundTokens(key);
    const other = await boundTokens(key);
    const forOther = await proof(key, "GET", USERINFO_ENDPOINT, { accessToken: other.tokens.access_token });
    await refusedAtResource(await userinfo(tokens.access_token, { dpop: forOther }), "invalid_dpop_proof");
    const noAth = await proof(key, "GET", USERINFO_ENDPOINT);
    await refusedAtResource(await userinfo(tokens.access_token, { dpop: noAth }), "invalid_dpop_proof");
  });

  it("a proof by another key is refused: the thief's own key does not match cnf.jkt", async () => {
    const { tokens } = await boundTokens(await proofKey());
    const thief = await proofKey();
    const dpop = await proof(thief, "GET", USERINFO_ENDPOINT, { accessToken: tokens.access_token });
    await refusedAtResource(await userinfo(tokens.access_token, { dpop }), "invalid_dpop_proof");
  });

  it("the DPoP scheme without a proof, and a proof replayed, are refused", async () => {
    const key = await proofKey();
    const { tokens } = await boundTokens(key);
    await refusedAtResource(await userinfo(tokens.access_token), "invalid_dpop_proof");
    const once = await proof(key, "GET", USERINFO_ENDPOINT, { accessToken: tokens.access_token });
    expect((await userinfo(tokens.access_token, { dpop: once })).status).toBe(200);
    await refusedAtResource(await userinfo(tokens.access_token, { dpop: once }), "invalid_dpop_proof");
  });

  it("the token endpoint's proof replayed at userinfo is refused (htm, htu and ath all differ)", async () => {
    const key = await proofKey();
    const { tokens } = await boundTokens(key);
    const tokenProof = await proof(key, "POST", TOKEN_ENDPOINT, {
      claims: { ath: await ath(tokens.access_token) },
    });
    await refusedAtResource(await userinfo(tokens.access_token, { dpop: tokenProof }), "invalid_dpop_proof");
  });

  it("an unbound (bearer) token sent with the DPoP scheme is refused: the scheme claims a binding it lacks", async () => {
    const client = await newClient(svc, { tokenEndpointAuthMethod: "none" });
    const session = await signUp(svc);
    const { code } = await codeFor(svc, client, session, {
      scope: "openid",
      code_challenge: await s256(VERIFIER),
      code_challenge_method: "S256",
    });
    const tokens = (await (
      await postForm(svc, "/oauth2/token", {
        grant_type: "authorization_code",
        code,
        redirect_uri: REDIRECT_URI,
        client_id: client.clientId,
        code_verifier: VERIFIER,
      })
    ).json()) as TokenAnswer;
    const key = await proofKey();
    const dpop = await proof(key, "GET", USERINFO_ENDPOINT, { accessToken: tokens.access_token });
    await refusedAtResource(await userinfo(tokens.access_token, { dpop }), "invalid_token");
    // As Bearer it works, and the challenge of a refused bearer request offers DPoP too (RFC 9449 §7.2).
    expect((await userinfo(tokens.access_token, {}, "Bearer")).status).toBe(200);
    const refused = await userinfo("garbage", {}, "Bearer");
    expect(refused.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token".*, DPoP algs="/);
  });
});

describe("DPoP-bound refresh tokens", () => {
  it("a bound refresh token with another key is refused before it rotates: the rightful client keeps its session", async () => {
    const key = await proofKey();
    const { client, tokens } = await boundTokens(key);
    const refresh = async (dpop?: string) =>
      postForm(
        svc,
        "/oauth2/token",
        { grant_type: "refresh_token", refresh_token: tokens.refresh_token!, client_id: client.clientId },
        dpop ? { dpop } : {},
      );
    const thief = await proofKey();
    await oauth2Error(await refresh(await proof(thief, "POST", TOKEN_ENDPOINT)), 400, "invalid_dpop_proof");
    await oauth2Error(await refresh(), 400, "invalid_grant");
    // Had the thief's attempt rotated the token, this would be a replay that revokes the grant.
    const rightful = await refresh(await proof(key, "POST", TOKEN_ENDPOINT));
    expect(rightful.status).toBe(200);
    expect(await rightful.json()).toMatchObject({ token_type: "DPoP" });
  });
});
