// The DPoP modules of the OpenID Foundation's FAPI 2.0 Security Profile test plan
// (`fapi2-security-profile-final-test-plan`, variant sender_constrain=dpop, client_auth_type=private_key_jwt), one
// `it` per module, titled with the module's name. Each does what the module does against the real HTTP surface —
// openid-client 6 as the client (PAR, private_key_jwt, DPoP), the JSON login step as the user, userinfo as the
// protected resource — and asserts what the module asserts; the comment above each says what that is, with the
// suite's condition names so a difference can be looked up in its source. TLS checks (every module checks the
// endpoints' TLS versions and ciphers) are the platform's (Cloudflare terminates TLS) and not repeated here.
import { exportJWK, generateKeyPair } from "jose";
import * as oidc from "openid-client";
import { describe, expect, it } from "vitest";
import type { WireClient } from "../../../src/oauth2/clients";
import { decodeJwt, signUp, type WireSession } from "../../helpers";
import { dpopKeyPair, proof, proofKey, relyingParty, sharedKey, USERINFO_ENDPOINT } from "../dpop-support";
import { newClient, provider, REDIRECT_URI, requestIdOf } from "../support";

const svc = provider();

interface Fapi {
  client: WireClient;
  config: oidc.Configuration;
}

/** A client as the plan configures one: confidential, private_key_jwt, DPoP-bound tokens. */
async function fapiClient(): Promise<Fapi> {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const kid = crypto.randomUUID();
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" };
  const client = await newClient(svc, {
    clientName: "FAPI 2.0 client",
    tokenEndpointAuthMethod: "private_key_jwt",
    jwks: { keys: [jwk] },
    dpopBoundAccessTokens: true,
  });
  const config = await relyingParty(svc, client, undefined, oidc.PrivateKeyJwt({ key: privateKey, kid }));
  return { client, config };
}

/**
 * The authorization part of every module: PAR (with a DPoP proof when `parDPoP`, the plan's
 * `useDpopAuthCodeBinding`), the browser at the authorization endpoint, the login step, the callback.
 */
async function authorizeThroughPar(
  fapi: Fapi,
  session: WireSession,
  options: { parDPoP?: oidc.DPoPHandle; extra?: Record<string, string> } = {},
) {
  const pkceCodeVerifier = oidc.randomPKCECodeVerifier();
  const expectedState = oidc.randomState();
  const expectedNonce = oidc.randomNonce();
  const url = await oidc.buildAuthorizationUrlWithPAR(
    fapi.config,
    {
      redirect_uri: REDIRECT_URI,
      scope: "openid offline_access",
      code_challenge: await oidc.calculatePKCECodeChallenge(pkceCodeVerifier),
      code_challenge_method: "S256",
      state: expectedState,
      nonce: expectedNonce,
      ...options.extra,
    },
    options.parDPoP ? { DPoP: options.parDPoP } : undefined,
  );
  const requestId = await requestIdOf(await svc.request("GET", url.href));
  const completed = await svc.post("/oauth2/login", { requestId }, session.accessToken);
  expect(completed.status).toBe(200);
  const callback = new URL(((await completed.json()) as { redirectUri: string }).redirectUri);
  return { callback, checks: { pkceCodeVerifier, expectedState, expectedNonce } };
}

/** The token request of the plan's flow with `DPoP`; tokens as openid-client validated them. */
async function tokensWith(
  fapi: Fapi,
  session: WireSession,
  DPoP: oidc.DPoPHandle,
  parDPoP?: oidc.DPoPHandle,
) {
  const { callback, checks } = await authorizeThroughPar(fapi, session, { parDPoP });
  return oidc.authorizationCodeGrant(fapi.config, callback, checks, undefined, { DPoP });
}

/** The resource request (the suite's CallProtectedResource with a DPoP proof): userinfo. */
const resource = (token: string, headers: Record<string, string>, url = USERINFO_ENDPOINT) =>
  svc.request("GET", url, { headers: { authorization: `DPoP ${token}`, ...headers } });

/** How an openid-client call failed at the server: its answer's status and error. */
const failureOf = (attempt: Promise<unknown>) =>
  attempt.then(
    () => {
      throw new Error("expected the server to refuse this request");
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(oidc.ResponseBodyError);
      return error as oidc.ResponseBodyError;
    },
  );

/** CheckTokenEndpointReturnedInvalidRequestGrantOrDPopProofError: 400 with one of those three errors. */
function invalidRequestGrantOrDpopProof(failure: oidc.ResponseBodyError) {
  expect(failure.status).toBe(400);
  expect(["invalid_request", "invalid_grant", "invalid_dpop_proof"]).toContain(failure.error);
}

describe("FAPI 2.0 Security Profile (final), DPoP modules", () => {
  // Of the discovery module, the DPoP check: FAPI2CheckDpopSigningAlgValuesSupported, dpop_signing_alg_values_supported
  // lists at least one of PS256, ES256, EdDSA (FAPI 2.0 §5.4). (Its PAR and private_key_jwt checks: fapi2-par.test.ts.)
  it("fapi2-security-profile-final-discovery-end-point-verification", async () => {
    const { config } = await fapiClient();
    const algs = config.serverMetadata().dpop_signing_alg_values_supported ?? [];
    expect(algs.filter((alg) => ["PS256", "ES256", "EdDSA"].includes(alg)).length).toBeGreaterThan(0);
  });

  // Two clients, each through PAR, the code and the token endpoint with a DPoP proof; the second pushes `dpop_jkt`
  // only (RFC 9449 §10.1, no DPoP header at PAR). Tokens are sender-constrained (token_type DPoP), the ID token
  // validates, and the resource answers 200 to a DPoP request (EnsureHttpStatusCodeIs200or201), with any Accept.
  it("fapi2-security-profile-final-happy-flow", async () => {
    const session = await signUp(svc);
    const first = await fapiClient();
    const firstKey = await dpopKeyPair();
    const DPoP = oidc.getDPoPHandle(first.config, firstKey.pair);
    const tokens = await tokensWith(first, session, DPoP);
    expect(tokens.token_type).toBe("dpop");
    expect(tokens.claims()?.sub).toBe(session.user.id);
    expect(decodeJwt(tokens.access_token).payload.cnf).toEqual({ jkt: firstKey.jkt });
    for (const accept of ["application/json; charset=utf-8", "*/*"]) {
      const answer = await oidc.fetchProtectedResource(
        first.config,
        tokens.access_token,
        new URL(USERINFO_ENDPOINT),
        "GET",
        undefined,
        new Headers({ accept }),
        { DPoP },
      );
      expect(answer.status).toBe(200);
    }

    const second = await fapiClient();
    const secondKey = await dpopKeyPair();
    const { callback, checks } = await authorizeThroughPar(second, session, {
      extra: { dpop_jkt: secondKey.jkt },
    });
    const secondDPoP = oidc.getDPoPHandle(second.config, secondKey.pair);
    const secondTokens = await oidc.authorizationCodeGrant(second.config, callback, checks, undefined, {
      DPoP: secondDPoP,
    });
    expect(secondTokens.token_type).toBe("dpop");
    const info = await oidc.fetchUserInfo(second.config, secondTokens.access_token, session.user.id, {
      DPoP: secondDPoP,
    });
    expect(info.sub).toBe(session.user.id);
  });

  // A valid token request for a DPoP-bound client without any DPoP proof: a 4xx, JSON, and one of invalid_request,
  // invalid_grant, invalid_dpop_proof (ValidateTokenEndpointResponseWithDpop), with a valid error_description.
  it("fapi2-security-profile-final-ensure-holder-of-key-required", async () => {
    const fapi = await fapiClient();
    const { callback, checks } = await authorizeThroughPar(fapi, await signUp(svc));
    const failure = await failureOf(oidc.authorizationCodeGrant(fapi.config, callback, checks));
    invalidRequestGrantOrDpopProof(failure);
    // ValidateErrorDescriptionFromTokenEndpointResponseError: printable ASCII without `"` and `\` (RFC 6749 §5.2).
    expect(failure.error_description).toMatch(/^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/);
  });

  // SetAccessTokenTypeToInvertedCase: the resource request's scheme as "dpOP" still works (RFC 9110 §11.1).
  it("fapi2-security-profile-final-access-token-type-header-case-sensitivity", async () => {
    const fapi = await fapiClient();
    const { key, pair } = await sharedKey();
    const tokens = await tokensWith(fapi, await signUp(svc), oidc.getDPoPHandle(fapi.config, pair));
    const dpop = await proof(key, "GET", USERINFO_ENDPOINT, { accessToken: tokens.access_token });
    const answer = await svc.request("GET", "/oauth2/userinfo", {
      headers: { authorization: `dpOP ${tokens.access_token}`, dpop },
    });
    expect(answer.status).toBe(200);
  });

  // SetDpopNbfToNow, SetDpopExpToFiveMinutesInFuture: proofs carrying nbf and exp are accepted at the token endpoint
  // and the resource.
  it("fapi2-security-profile-final-check-dpop-proof-nbf-exp", async () => {
    const fapi = await fapiClient();
    const DPoP = oidc.getDPoPHandle(fapi.config, (await dpopKeyPair()).pair, {
      [oidc.modifyAssertion]: (_header, payload) => {
        payload.nbf = Math.floor(Date.now() / 1000);
        payload.exp = Math.floor(Date.now() / 1000) + 300;
      },
    });
    const session = await signUp(svc);
    const tokens = await tokensWith(fapi, session, DPoP);
    expect((await oidc.fetchUserInfo(fapi.config, tokens.access_token, session.user.id, { DPoP })).sub).toBe(
      session.user.id,
    );
  });

  // SetDpopIatTo10SecondsInPast on the PAR, token and resource proofs: all accepted (FAPI2-SP-ID2-5.3.2.1-14).
  it("fapi2-security-profile-final-ensure-dpopproof-with-iat-10seconds-before-succeeds", async () => {
    await flowWithShiftedIat(-10);
  });

  // SetDpopIatTo8SecondsInFuture on the PAR, token and resource proofs: all accepted (a client's clock a little ahead).
  it("fapi2-security-profile-final-ensure-dpopproof-with-iat-10seconds-after-succeeds", async () => {
    await flowWithShiftedIat(8);
  });

  // A PAR request with a DPoP proof (key A) and a dpop_jkt of key B: the PAR endpoint refuses it with
  // invalid_request or invalid_dpop_proof (EnsurePARInvalidRequestOrInvalidDpopProof, DPOP-10.1).
  it("fapi2-security-profile-final-ensure-mismatched-dpop-jkt-fails", async () => {
    const fapi = await fapiClient();
    const [a, b] = [await dpopKeyPair(), await dpopKeyPair()];
    const failure = await failureOf(
      authorizeThroughPar(fapi, await signUp(svc), {
        parDPoP: oidc.getDPoPHandle(fapi.config, a.pair),
        extra: { dpop_jkt: b.jkt },
      }),
    );
    expect(failure.status).toBe(400);
    expect(["invalid_request", "invalid_dpop_proof"]).toContain(failure.error);
  });

  // PAR with a proof by key A, the token request with a proof by key B: the token endpoint refuses it
  // (CheckTokenEndpointReturnedInvalidRequestGrantOrDPopProofError, DPOP-10.1).
  it("fapi2-security-profile-final-ensure-token-endpoint-fails-with-mismatched-dpop-proof-jkt", async () => {
    const fapi = await fapiClient();
    const [a, b] = [await dpopKeyPair(), await dpopKeyPair()];
    const { callback, checks } = await authorizeThroughPar(fapi, await signUp(svc), {
      parDPoP: oidc.getDPoPHandle(fapi.config, a.pair),
    });
    invalidRequestGrantOrDpopProof(await codeExchangeFailure(fapi, callback, checks, b.pair));
  });

  // A dpop_jkt of key B in the (pushed) authorization request, the token request with a proof by key A: refused
  // (CheckTokenEndpointReturnedInvalidRequestGrantOrDPopProofError).
  it("fapi2-security-profile-final-ensure-token-endpoint-fails-with-mismatched-dpop-jkt", async () => {
    const fapi = await fapiClient();
    const [a, b] = [await dpopKeyPair(), await dpopKeyPair()];
    const { callback, checks } = await authorizeThroughPar(fapi, await signUp(svc), {
      extra: { dpop_jkt: b.jkt },
    });
    invalidRequestGrantOrDpopProof(await codeExchangeFailure(fapi, callback, checks, a.pair));
  });

  // A proof at PAR and a proof by the same key at the token endpoint: the flow succeeds (the code is bound to the key
  // at PAR, RFC 9449 §10.1).
  it("fapi2-security-profile-final-ensure-dpopproof-at-par-endpoint-binding-success", async () => {
    const fapi = await fapiClient();
    const { pair, jkt } = await dpopKeyPair();
    const DPoP = oidc.getDPoPHandle(fapi.config, pair);
    const tokens = await tokensWith(fapi, await signUp(svc), DPoP, DPoP);
    expect(decodeJwt(tokens.access_token).payload.cnf).toEqual({ jkt });
  });

  // dpop_jkt matching the proofs sent to PAR and to the token endpoint: the flow succeeds.
  it("fapi2-security-profile-final-ensure-dpop-auth-code-binding-success", async () => {
    const fapi = await fapiClient();
    const { pair, jkt } = await dpopKeyPair();
    const DPoP = oidc.getDPoPHandle(fapi.config, pair);
    const session = await signUp(svc);
    const { callback, checks } = await authorizeThroughPar(fapi, session, {
      parDPoP: DPoP,
      extra: { dpop_jkt: jkt },
    });
    const tokens = await oidc.authorizationCodeGrant(fapi.config, callback, checks, undefined, { DPoP });
    expect(decodeJwt(tokens.access_token).payload.cnf).toEqual({ jkt });
  });

  // Obtain a token, check it works, then the checks of RFC 9449 §4.3 at the resource, one block each: what must fail
  // answers 400 or 401 (EnsureHttpStatusCodeIs400or401), what must work 200. Blocks the suite runs only with an RSA
  // key (RS256 refused) or with nonces are in dpop-attacks.test.ts and dpop.test.ts.
  it("fapi2-security-profile-final-dpop-negative-tests", async () => {
    const fapi = await fapiClient();
    const { key, pair } = await sharedKey();
    const tokens = await tokensWith(fapi, await signUp(svc), oidc.getDPoPHandle(fapi.config, pair));
    const token = tokens.access_token;
    const now = Math.floor(Date.now() / 1000);
    const valid = (options: Parameters<typeof proof>[3] = {}, htu = USERINFO_ENDPOINT, htm = "GET") =>
      proof(key, htm, htu, { accessToken: token, ...options });
    const works = async (headers: Record<string, string>, url?: string) =>
      expect((await resource(token, headers, url)).status).toBe(200);
    const fails = async (headers: Record<string, string>) =>
      expect([400, 401]).toContain((await resource(token, headers)).status);

    await works({ DPOP: await valid() }); // "all upper case header value"
    await fails({ dpop: `${await valid()}, ${await valid()}` }); // more than one DPoP header
    await fails({ dpop: `${await valid()}x.y` }); // not a well-formed JWT
    await fails({ dpop: await valid({ header: { typ: undefined } }) }); // typ missing
    await fails({ dpop: await withoutAlg(await valid()) }); // alg missing
    await fails({ dpop: await valid({ header: { jwk: undefined } }) }); // jwk missing
    for (const claim of ["jti", "htm", "htu", "iat", "ath"]) {
      await fails({ dpop: await valid({ claims: { [claim]: undefined } }) }); // each required claim missing
    }
    await fails({ dpop: await valid({ header: { typ: "JWT" } }) }); // invalid typ
    await fails({ dpop: unsignedCopy(await valid()) }); // alg none
    await fails({ dpop: brokenSignature(await valid()) }); // invalid signature
    await fails({ dpop: await valid({ header: { jwk: await exportJWK(key.privateKey) } }) }); // private key
    await fails({ dpop: await valid({}, USERINFO_ENDPOINT, "PUT") }); // wrong htm
    await works({ dpop: await valid({}, `${USERINFO_ENDPOINT}?query=1#fragment`) }); // htu query/fragment ignored
    await works({ dpop: await valid() }, `${USERINFO_ENDPOINT}?query=1`); // the request's query ignored
    await fails({ dpop: await valid({}, "https://elsewhere.example.com/userinfo") }); // another URL
    await fails({ dpop: await valid({ claims: { iat: now + 3600 } }) }); // iat an hour ahead
    await fails({ dpop: await valid({ claims: { iat: now - 3600 } }) }); // iat an hour ago
    const fixed = await valid({ claims: { jti: "fixed-jti" } });
    await works({ dpop: fixed }); // first use of a jti
    await fails({ dpop: fixed }); // its second use
    await fails({ dpop: await valid({ claims: { ath: "A".repeat(43) } }) }); // wrong ath
    const other = await proofKey();
    await fails({ dpop: await proof(other, "GET", USERINFO_ENDPOINT, { accessToken: token }) }); // another key
    await works({
      dpop: await valid({ header: { extra: "header" }, claims: { extra: "claim" } }),
    }); // unknown members ignored
    await works({ dpop: await valid({}, USERINFO_ENDPOINT.replace("http://localhost", "HTTP://LOCALHOST")) });
    // The default port is normalised away (RFC 3986 §6.2.3): the request to port 80, the proof naming it.
    await works(
      { dpop: await valid({}, "http://localhost:80/auth/v1/oauth2/userinfo") },
      "http://localhost/auth/v1/oauth2/userinfo",
    );
    await fails({}); // no proof
    expect([400, 401]).toContain(
      (await svc.request("GET", "/oauth2/userinfo", { headers: { authorization: `Bearer ${token}` } }))
        .status,
    ); // no proof, scheme Bearer
    await works({ dpop: await valid() }); // a correct proof still works
  });

  // The DPoP part of the refresh-token module: the refresh with a proof gives a DPoP-bound token, and "a sender
  // constrained refresh_token grant attempt, sent without proof of possession, fails" with 400 and invalid_client,
  // invalid_grant or invalid_request (CheckTokenEndpointReturnedInvalidClientGrantOrRequestError). The module's other
  // steps are about rotation, not DPoP (see the report in docs/oauth2.md §10.6).
  it("fapi2-security-profile-final-refresh-token", async () => {
    const fapi = await fapiClient();
    const { pair, jkt } = await dpopKeyPair();
    const DPoP = oidc.getDPoPHandle(fapi.config, pair);
    const tokens = await tokensWith(fapi, await signUp(svc), DPoP);
    expect(tokens.refresh_token).toMatch(/^[\x20-\x7E]+$/); // EnsureRefreshTokenContainsAllowedCharactersOnly
    const refreshed = await oidc.refreshTokenGrant(fapi.config, tokens.refresh_token!, undefined, { DPoP });
    expect(refreshed.token_type).toBe("dpop");
    expect(decodeJwt(refreshed.access_token).payload.cnf).toEqual({ jkt });
    const failure = await failureOf(oidc.refreshTokenGrant(fapi.config, refreshed.refresh_token!));
    expect(failure.status).toBe(400);
    expect(["invalid_client", "invalid_grant", "invalid_request"]).toContain(failure.error);
  });
});

/** The code exchange with a proof by `pair`, expected to be refused: how. */
function codeExchangeFailure(
  fapi: Fapi,
  callback: URL,
  checks: { pkceCodeVerifier: string; expectedState: string },
  pair: CryptoKeyPair,
): Promise<oidc.ResponseBodyError> {
  return failureOf(
    oidc.authorizationCodeGrant(fapi.config, callback, checks, undefined, {
      DPoP: oidc.getDPoPHandle(fapi.config, pair),
    }),
  );
}

/** The iat modules: every proof of the flow (PAR, token, resource) made `seconds` off the clock. */
async function flowWithShiftedIat(seconds: number) {
  const fapi = await fapiClient();
  const DPoP = oidc.getDPoPHandle(fapi.config, (await dpopKeyPair()).pair, {
    [oidc.modifyAssertion]: (_header, payload) => {
      payload.iat = Math.floor(Date.now() / 1000) + seconds;
    },
  });
  const session = await signUp(svc);
  const tokens = await tokensWith(fapi, session, DPoP, DPoP);
  expect(tokens.token_type).toBe("dpop");
  expect((await oidc.fetchUserInfo(fapi.config, tokens.access_token, session.user.id, { DPoP })).sub).toBe(
    session.user.id,
  );
}

/** A proof whose header lost its alg after signing (the suite's SignDpopAndRemoveAlg). */
async function withoutAlg(jwt: string): Promise<string> {
  const [header, payload, signature] = jwt.split(".");
  const decoded = JSON.parse(atob(header!.replace(/-/g, "+").replace(/_/g, "/"))) as Record<string, unknown>;
  delete decoded.alg;
  return `${b64(decoded)}.${payload}.${signature}`;
}

/** The same claims with `alg: none` and no signature. */
function unsignedCopy(jwt: string): string {
  const [header, payload] = jwt.split(".");
  const decoded = JSON.parse(atob(header!.replace(/-/g, "+").replace(/_/g, "/"))) as Record<string, unknown>;
  return `${b64({ ...decoded, alg: "none" })}.${payload}.`;
}

/** The same proof with a signature that no longer verifies (the suite's InvalidateDpopProofSignature). */
function brokenSignature(jwt: string): string {
  const [header, payload, signature] = jwt.split(".");
  const flipped = signature!.startsWith("A") ? `B${signature!.slice(1)}` : `A${signature!.slice(1)}`;
  return `${header}.${payload}.${flipped}`;
}

const b64 = (value: object) =>
  btoa(JSON.stringify(value)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
