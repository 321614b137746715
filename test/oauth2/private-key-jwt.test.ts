// private_key_jwt client authentication (RFC 7523 §2.2 and §3, OIDC Core §9, contract §12): a client proves itself
// with a JWT signed by a key it registered (`jwks`, or `jwks_uri` fetched under the outbound-URL policy).
// Threats: a captured assertion replayed; an assertion made for another server (wrong aud, or the audience-injection
// attack at PAR: a token endpoint URL a rogue server passed off as its own); algorithm confusion (HS256 keyed with
// the client's public key, which anyone has) and `alg: none`; an expired or long-lived assertion; another client's
// key; a jwks_uri pointing at this service's own hosts (SSRF, a stored file posing as keys); made-up key ids driving
// fetches to the client's host; a private_key_jwt client authenticated another way, or a secret client with an
// assertion.
import { env } from "cloudflare:test";
import { type CryptoKey, exportJWK, importJWK, type JWK, SignJWT, UnsecuredJWT } from "jose";
import * as oidc from "openid-client";
import { describe, expect, it } from "vitest";
import type { WireClient } from "../../src/oauth2/clients";
import { SERVER, signUp, type TestService } from "../helpers";
import {
  ASSERTION_TYPE,
  browserThrough,
  clientAssertion,
  discover,
  flowChecks,
  keyPair,
} from "./relying-party-in-pool";
import {
  basic,
  ISSUER,
  newClient,
  oauth2Error,
  postForm,
  provider,
  REDIRECT_URI,
  s256,
  VERIFIER,
} from "./support";

const svc = provider();
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const KEYS_HOST = "https://client-docs.fake";

/** Puts a key set at a fresh path of the fake key host; returns its URL. */
async function publishKeys(keys: JWK[], path = `/keys/${crypto.randomUUID()}.json`): Promise<string> {
  await env.OUTBOUND!.fetch(`${KEYS_HOST}/__doc?${new URLSearchParams({ path })}`, {
    method: "PUT",
    body: JSON.stringify({ keys }),
  });
  return `${KEYS_HOST}${path}`;
}

const fetchesOf = async (url: string) =>
  (await (
    await env.OUTBOUND!.fetch(`${KEYS_HOST}/__fetches?path=${new URL(url).pathname}`)
  ).json()) as number;

/** A client an admin registered with private_key_jwt, for the client_credentials grant (and the code flow). */
function keyClient(
  keys: { jwks?: JWK[]; jwksUri?: string },
  service: TestService = svc,
): Promise<WireClient> {
  return newClient(service, {
    tokenEndpointAuthMethod: "private_key_jwt",
    grantTypes: ["authorization_code", "refresh_token", "client_credentials"],
    ...(keys.jwks ? { jwks: { keys: keys.jwks } } : { jwksUri: keys.jwksUri }),
  });
}

function clientCredentials(clientAssertion: string, extra: Record<string, string> = {}, service = svc) {
  return postForm(service, "/oauth2/token", {
    grant_type: "client_credentials",
    client_assertion_type: ASSERTION_TYPE,
    client_assertion: clientAssertion,
    ...extra,
  });
}

describe("private_key_jwt with openid-client", () => {
  it("PAR, the code flow, refresh and introspection, authenticated with a registered jwks (PS256)", async () => {
    const key = await keyPair("PS256");
    const client = await keyClient({ jwks: [key.publicJwk] });
    expect(client.clientSecret).toBeUndefined();
    const config = await discover(
      svc,
      client.clientId,
      oidc.PrivateKeyJwt({ key: key.privateKey, kid: key.kid }),
    );
    const { params, checks } = await flowChecks();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT_URI,
      scope: "openid offline_access",
      ...params,
    });
    const session = await signUp(svc);
    const tokens = await oidc.authorizationCodeGrant(config, await browserThrough(svc, url, session), checks);
    expect(tokens.claims()?.sub).toBe(session.user.id);
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).toBeTruthy();
    expect(await oidc.tokenIntrospection(config, refreshed.access_token)).toMatchObject({
      active: true,
      client_id: client.clientId,
    });
  });

  it("ES256 and Ed25519 keys, with the client_credentials grant", async () => {
    for (const alg of ["ES256", "Ed25519"] as const) {
      const key = await keyPair(alg);
      const client = await keyClient({ jwks: [key.publicJwk] });
      const config = await discover(
        svc,
        client.clientId,
        oidc.PrivateKeyJwt({ key: key.privateKey, kid: key.kid }),
      );
      const tokens = await oidc.clientCredentialsGrant(config);
      expect(tokens.access_token, alg).toBeTruthy();
    }
  });

  it("keys from a jwks_uri: fetched once, kept, fetched again once when the client rotates", async () => {
    const first = await keyPair("ES256");
    const path = `/keys/${crypto.randomUUID()}.json`;
    const jwksUri = await publishKeys([first.publicJwk], path);
    const client = await keyClient({ jwksUri });
    const config = await discover(
      svc,
      client.clientId,
      oidc.PrivateKeyJwt({ key: first.privateKey, kid: first.kid }),
    );
    await oidc.clientCredentialsGrant(config);
    await oidc.clientCredentialsGrant(config);
    expect(await fetchesOf(jwksUri)).toBe(1);
    // The client rotates: a new key id the kept set lacks makes one refetch.
    const second = await keyPair("ES256");
    await publishKeys([second.publicJwk], path);
    expect((await clientCredentials(await clientAssertion(second, client.clientId))).status).toBe(200);
    expect(await fetchesOf(jwksUri)).toBe(2);
  });
});

describe("private_key_jwt under attack", () => {
  it("threat: a captured assertion replayed — accepted once, then 401", async () => {
    const key = await keyPair();
    const client = await keyClient({ jwks: [key.publicJwk] });
    const captured = await clientAssertion(key, client.clientId);
    expect((await clientCredentials(captured)).status).toBe(200);
    const replayed = await oauth2Error(await clientCredentials(captured), 401, "invalid_client");
    expect(replayed.error_description).toMatch(/used before \(jti\)/);
  });

  it("threat: an assertion for another server (wrong aud), or an array/endpoint aud at PAR (audience injection)", async () => {
    const key = await keyPair();
    const client = await keyClient({ jwks: [key.publicJwk] });
    for (const aud of [
      "https://other-as.example",
      `${ISSUER}/oauth2/userinfo`,
      [`https://other-as.example`],
    ]) {
      const refused = await oauth2Error(
        await clientCredentials(await clientAssertion(key, client.clientId, { aud })),
        401,
        "invalid_client",
      );
      expect(refused.error_description).toMatch(/aud/);
    }
    // OIDC Core §9's token endpoint URL is still accepted where it was always meant (compatibility).
    const atToken = await clientCredentials(
      await clientAssertion(key, client.clientId, { aud: `${ISSUER}/oauth2/token` }),
    );
    expect(atToken.status).toBe(200);
    const pushWith = async (aud: unknown) =>
      postForm(svc, "/oauth2/par", {
        response_type: "code",
        redirect_uri: REDIRECT_URI,
        code_challenge: await s256(VERIFIER),
        code_challenge_method: "S256",
        client_assertion_type: ASSERTION_TYPE,
        client_assertion: await clientAssertion(key, client.clientId, { aud }),
      });
    for (const aud of [`${ISSUER}/oauth2/token`, `${ISSUER}/oauth2/par`, [ISSUER]]) {
      expect((await oauth2Error(await pushWith(aud), 401, "invalid_client")).error_description).toMatch(
        /aud/,
      );
    }
    expect((await pushWith(ISSUER)).status).toBe(201);
  });

  it("threat: algorithm confusion — HS256 keyed with the client's public key, and alg none", async () => {
    const key = await keyPair("RS256");
    const client = await keyClient({ jwks: [key.publicJwk] });
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: client.clientId,
      sub: client.clientId,
      aud: ISSUER,
      jti: crypto.randomUUID(),
      exp: now + 60,
    };
    const hmac = await new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256", kid: key.kid })
      .sign(new TextEncoder().encode(JSON.stringify(key.publicJwk)));
    const signedWith = /must be signed with PS256, ES256, EdDSA, Ed25519, RS256/;
    const confused = await oauth2Error(await clientCredentials(hmac), 401, "invalid_client");
    expect(confused.error_description).toMatch(signedWith);
    const unsecured = new UnsecuredJWT({ ...claims, jti: crypto.randomUUID() }).encode();
    const unsigned = await oauth2Error(await clientCredentials(unsecured), 401, "invalid_client");
    expect(unsigned.error_description).toMatch(signedWith);
  });

  it("threat: an expired assertion, one that lives too long, and one issued in the future", async () => {
    const key = await keyPair();
    const client = await keyClient({ jwks: [key.publicJwk] });
    const now = Math.floor(Date.now() / 1000);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ exp: now - 300 }, /expired/],
      [{ exp: now + 3600 }, /more than 5 minutes ahead/],
      [{ iat: now + 120, nbf: now + 120, exp: now + 180 }, /not valid yet \(nbf\)/],
      [{ iat: now + 120, exp: now + 180 }, /issued in the future \(iat\)/],
      [{ exp: undefined }, /exp/],
      [{ jti: undefined }, /jti/],
    ];
    for (const [claims, why] of cases) {
      const response = await clientCredentials(await clientAssertion(key, client.clientId, claims));
      expect((await oauth2Error(response, 401, "invalid_client")).error_description).toMatch(why);
    }
  });

  it("threat: another client's key, or an assertion naming another client (sub, iss, client_id)", async () => {
    const mine = await keyPair();
    const theirs = await keyPair();
    const client = await keyClient({ jwks: [mine.publicJwk] });
    const other = await keyClient({ jwks: [theirs.publicJwk] });
    // Signed with the other client's key (its kid too): no key of this client verifies it.
    await oauth2Error(
      await clientCredentials(await clientAssertion(theirs, client.clientId)),
      401,
      "invalid_client",
    );
    await oauth2Error(
      await clientCredentials(await clientAssertion(mine, client.clientId, { iss: other.clientId })),
      401,
      "invalid_client",
    );
    await oauth2Error(
      await clientCredentials(await clientAssertion(mine, client.clientId, { sub: undefined })),
      401,
      "invalid_client",
    );
    await oauth2Error(
      await clientCredentials(await clientAssertion(mine, client.clientId), { client_id: other.clientId }),
      401,
      "invalid_client",
    );
  });

  it("threat: a jwks_uri that points at the service itself — refused when registered, and when fetched", async () => {
    for (const jwksUri of [`${SERVER}/auth/v1/oauth2/jwks`, "https://127.0.0.1/keys.json"]) {
      const response = await svc.request("POST", "/admin/oauth2/clients", {
        headers: ADMIN,
        json: {
          clientName: "Inside",
          redirectUris: [REDIRECT_URI],
          tokenEndpointAuthMethod: "private_key_jwt",
          jwksUri,
        },
      });
      expect(response.status, jwksUri).toBe(400);
    }
    // A URI registered while allowed, on a host that has since become one of the service's own: never fetched.
    const key = await keyPair();
    const jwksUri = await publishKeys([key.publicJwk]);
    const client = await keyClient({ jwksUri });
    const ownHost = provider({ AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: KEYS_HOST });
    const refused = await clientCredentials(await clientAssertion(key, client.clientId), {}, ownHost);
    const body = await oauth2Error(refused, 401, "invalid_client");
    expect(body.error_description).toBe("the client's keys could not be fetched from its jwks_uri");
    expect(await fetchesOf(jwksUri)).toBe(0);
  });

  it("threat: made-up key ids cannot drive fetches to the client's host (one refetch, then none for 30 s)", async () => {
    const key = await keyPair();
    const jwksUri = await publishKeys([key.publicJwk]);
    const client = await keyClient({ jwksUri });
    expect((await clientCredentials(await clientAssertion(key, client.clientId))).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const forged = await clientAssertion(key, client.clientId, {}, { kid: crypto.randomUUID() });
      await oauth2Error(await clientCredentials(forged), 401, "invalid_client");
    }
    expect(await fetchesOf(jwksUri)).toBe(2);
  });

  it("threat: the method is the registered one — no secret, Basic or bare client_id for a key client, no assertion for a secret one", async () => {
    const key = await keyPair();
    const client = await keyClient({ jwks: [key.publicJwk] });
    const cc = { grant_type: "client_credentials" };
    await oauth2Error(
      await postForm(svc, "/oauth2/token", { ...cc, client_id: client.clientId }),
      401,
      "invalid_client",
    );
    await oauth2Error(
      await postForm(svc, "/oauth2/token", { ...cc, client_id: client.clientId, client_secret: "guess" }),
      401,
      "invalid_client",
    );
    await oauth2Error(
      await postForm(svc, "/oauth2/token", cc, basic({ ...client, clientSecret: "guess" })),
      401,
      "invalid_client",
    );
    const secretClient = await newClient(svc, { grantTypes: ["client_credentials"] });
    // The secret client's own key does not exist: an assertion "from" it is refused by method, before any key.
    await oauth2Error(
      await clientCredentials(await clientAssertion(key, secretClient.clientId)),
      401,
      "invalid_client",
    );
    // Two methods at once.
    await oauth2Error(
      await postForm(
        svc,
        "/oauth2/token",
        {
          ...cc,
          client_assertion_type: ASSERTION_TYPE,
          client_assertion: await clientAssertion(key, secretClient.clientId),
        },
        basic(secretClient),
      ),
      400,
      "invalid_request",
    );
    await oauth2Error(
      await postForm(svc, "/oauth2/token", {
        ...cc,
        client_assertion_type: "urn:example:saml",
        client_assertion: "x",
      }),
      400,
      "invalid_request",
    );
  });

  it("a key whose JWK names its algorithm (alg: PS256) is used with that algorithm only (FAPI 2.0: no RS256)", async () => {
    const key = await keyPair("PS256", "PS256");
    const client = await keyClient({ jwks: [key.publicJwk] });
    // The same RSA key, signing RS256 (RSASSA-PKCS1-v1_5) instead of PS256.
    const { alg: _alg, ...privateJwk } = await exportJWK(key.privateKey);
    const sameKeyAsRs256 = (await importJWK(privateJwk, "RS256")) as CryptoKey;
    const rs256 = await clientAssertion(
      { ...key, alg: "RS256", privateKey: sameKeyAsRs256 },
      client.clientId,
    );
    await oauth2Error(await clientCredentials(rs256), 401, "invalid_client");
    expect((await clientCredentials(await clientAssertion(key, client.clientId))).status).toBe(200);
  });
});
