// The JWT bearer grant (RFC 7523 §2.1, contract §12): a client presents an assertion from an issuer it trusts
// (`trustedIssuers`, admin API) naming a user of this service, for an access token of that user. Threats, each named
// in its test: a replayed assertion (jti), an untrusted issuer, an assertion for another server (aud), an expired or
// far-future one, alg none and HS256 signed with the issuer's public key (algorithm confusion), another kind of JWT
// passed off as a grant (an access token), an assertion of this server's own, an issuer key set served by the service
// itself (SSRF / self-vouching), a subject that is an email or a disabled user (account takeover), scope escalation,
// and a client without the grant. And a platform fault after the assertion's jti was taken: the 503's retry with the
// same assertion redeems it, and no grant is left that no answer carried.
import { env } from "cloudflare:test";
import { base64url, SignJWT } from "jose";
import * as oidc from "openid-client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { expectOAuth2Unavailable } from "../faults/support";
import { decodeJwt, SERVER, signUp } from "../helpers";
import { failingNamespace, failingShards } from "../support/faults";
import { allInShards, userD1 } from "../support/shards";
import {
  fakeIdp,
  fetchesOf,
  JWT_BEARER,
  publishKeys,
  redeem,
  trustingClient,
  viaService,
} from "./assertions";
import { basic, ISSUER, oauth2Error, postForm, provider, type TokenAnswer } from "./support";

const API = "https://api.example.com";
const svc = provider({ AUTH_OAUTH2_PROVIDER_RESOURCES: API });
const ADMIN = { "x-hasura-admin-secret": String(svc.env.AUTH_ADMIN_SECRET) };

afterEach(() => {
  vi.useRealTimers();
});

/** An `invalid_grant` whose description says why (so each test proves the check it names, not another). */
async function refused(response: Response, why: string) {
  const body = await oauth2Error(response, 400, "invalid_grant");
  expect(body.error_description).toContain(why);
}

describe("JWT bearer grant (RFC 7523 §2.1)", () => {
  it("gives a user's access token for an assertion from a trusted issuer, with no refresh token (openid-client)", async () => {
    const idp = await fakeIdp();
    // The client also has refresh_token: the grant still answers none (the client presents a new assertion).
    const client = await trustingClient(svc, idp, {
      grantTypes: [JWT_BEARER, "refresh_token"],
      scopes: ["openid", "profile", "email"],
    });
    const user = (await signUp(svc)).user;
    const config = await oidc.discovery(
      new URL(ISSUER),
      client.clientId,
      undefined,
      oidc.ClientSecretBasic(client.clientSecret!),
      { execute: [oidc.allowInsecureRequests], [oidc.customFetch]: viaService(svc) },
    );
    expect(config.serverMetadata().grant_types_supported).toContain(JWT_BEARER);
    const answer = await oidc.genericGrantRequest(config, JWT_BEARER, {
      assertion: await idp.sign({ sub: user.id }),
      scope: "openid email",
    });
    expect(answer).toMatchObject({ token_type: "bearer", scope: "openid email" });
    expect(answer.refresh_token).toBeUndefined();
    expect(answer.id_token).toBeUndefined();
    const { header, payload } = decodeJwt(answer.access_token);
    expect(header.typ).toBe("at+jwt");
    expect(payload).toMatchObject({
      iss: ISSUER,
      sub: user.id,
      client_id: client.clientId,
      aud: client.clientId,
    });
    expect(payload.grant_id).toEqual(expect.any(String));
    expect(payload.acr).toBeUndefined();
    // A grant like any other: introspection and userinfo see the user.
    const introspection = await postForm(
      svc,
      "/oauth2/introspect",
      { token: answer.access_token },
      basic(client),
    );
    expect(await introspection.json()).toMatchObject({ active: true, sub: user.id });
    const info = await svc.get("/oauth2/userinfo", answer.access_token);
    expect(await info.json()).toMatchObject({ sub: user.id, email: user.email });
  });

  it("binds the token to the client's DPoP key when it sends a proof (RFC 9449)", async () => {
    const idp = await fakeIdp();
    const client = await trustingClient(svc, idp);
    const user = (await signUp(svc)).user;
    const config = new oidc.Configuration(
      { issuer: ISSUER, token_endpoint: `${ISSUER}/oauth2/token` },
      client.clientId,
      undefined,
      oidc.ClientSecretBasic(client.clientSecret!),
    );
    config[oidc.customFetch] = viaService(svc);
    oidc.allowInsecureRequests(config);
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair("ES256"));
    const answer = await oidc.genericGrantRequest(
      config,
      JWT_BEARER,
      { assertion: await idp.sign({ sub: user.id }) },
      { DPoP },
    );
    expect(answer.token_type).toBe("dpop");
    expect(decodeJwt(answer.access_token).payload.cnf).toEqual({ jkt: await DPoP.calculateThumbprint() });
  });

  it("accepts the token endpoint as aud, and a resource the client may reach", async () => {
    const idp = await fakeIdp("RS256");
    const client = await trustingClient(svc, idp);
    const user = (await signUp(svc)).user;
    const response = await redeem(
      svc,
      client,
      await idp.sign({ sub: user.id, aud: `${ISSUER}/oauth2/token` }),
      { resource: API },
    );
    expect(response.status).toBe(200);
    expect(decodeJwt(((await response.json()) as TokenAnswer).access_token).payload.aud).toBe(API);
  });

  it("refuses a replayed assertion (jti used once)", async () => {
    const idp = await fakeIdp();
    const client = await trustingClient(svc, idp);
    const user = (await signUp(svc)).user;
    const assertion = await idp.sign({ sub: user.id });
    expect((await redeem(svc, client, assertion)).status).toBe(200);
    await refused(await redeem(svc, client, assertion), "used before");
  });

  // Threat: replay in the skew. An assertion is accepted up to a minute past its `exp` (clock skew), but its jti
  // was kept only until `exp`: in that minute every presentation was a first one (13 tokens from one assertion).
  it("refuses a replay of an assertion accepted in the clock skew past its exp, in line and in parallel", async () => {
    const idp = await fakeIdp();
    const client = await trustingClient(svc, idp);
    const user = (await signUp(svc)).user;
    const now = Math.floor(Date.now() / 1000);
    const assertion = await idp.sign({ sub: user.id, iat: now - 120, exp: now - 20 });
    expect((await redeem(svc, client, assertion)).status).toBe(200);
    await refused(await redeem(svc, client, assertion), "used before");
    const again = await Promise.all(Array.from({ length: 5 }, () => redeem(svc, client, assertion)));
    expect(again.map((response) => response.status)).toEqual([400, 400, 400, 400, 400]);
  });

  it("refuses an assertion from an issuer the client does not trust, or signed by another key", async () => {
    const trusted = await fakeIdp();
    const stranger = await fakeIdp();
    const client = await trustingClient(svc, trusted);
    const user = (await signUp(svc)).user;
    await refused(await redeem(svc, client, await stranger.sign({ sub: user.id })), "does not trust");
    // The stranger claims to be the trusted issuer, with its own key (under the trusted kid).
    const impostor = await stranger.sign({ sub: user.id, iss: trusted.issuer }, { kid: trusted.kid });
    await refused(await redeem(svc, client, impostor), "not signed by a key");
  });

  it("refuses an assertion for another server (aud)", async () => {
    const idp = await fakeIdp();
    const client = await trustingClient(svc, idp);
    const user = (await signUp(svc)).user;
    const response = await redeem(
      svc,
      client,
      await idp.sign({ sub: user.id, aud: "https://as.elsewhere.example" }),
    );
    await refused(response, "aud");
  });

  it("refuses an expired assertion, one with no exp, and one that lives longer than an hour", async () => {
    const idp = await fakeIdp();
    const client = await trustingClient(svc, idp);
    const user = (await signUp(svc)).user;
    const now = Math.floor(Date.now() / 1000);
    await refused(
      await redeem(svc, client, await idp.sign({ sub: user.id, iat: now - 900, exp: now - 300 })),
      "has expired",
    );
    await refused(
      await redeem(svc, client, await idp.sign({ sub: user.id, exp: now + 86_400 })),
      "too far in the future",
    );
    const noExp = await new SignJWT({ sub: user.id, jti: crypto.randomUUID() })
      .setProtectedHeader({ alg: "ES256", kid: idp.kid })
      .setIssuer(idp.issuer)
      .setAudience(ISSUER)
      .sign(idp.privateKey);
    await refused(await redeem(svc, client, noExp), "exp");
    // A valid one becomes expired with time.
    const assertion = await idp.sign({ sub: user.id });
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 10 * 60 * 1000);
    await refused(await redeem(svc, client, assertion), "has expired");
  });

  it("refuses alg none and HS256 signed with the issuer's public key (algorithm confusion)", async () => {
    const idp = await fakeIdp("RS256");
    const client = await trustingClient(svc, idp);
    const user = (await signUp(svc)).user;
    const claims = {
      iss: idp.issuer,
      sub: user.id,
      aud: ISSUER,
      jti: crypto.randomUUID(),
      iat: Math.floor(Date.now() / 1000),
      exp: Math.floor(Date.now() / 1000) + 300,
    };
    const encode = (value: unknown) => base64url.encode(JSON.stringify(value));
    const unsigned = `${encode({ alg: "none", kid: idp.kid })}.${encode(claims)}.`;
    await refused(await redeem(svc, client, unsigned), "algorithm");
    const secret = new TextEncoder().encode(JSON.stringify(idp.publicJwk));
    const hs256 = await new SignJWT({ ...claims, jti: crypto.randomUUID() })
      .setProtectedHeader({ alg: "HS256", kid: idp.kid })
      .sign(secret);
    await refused(await redeem(svc, client, hs256), "algorithm");
  });

  it("refuses another kind of JWT passed off as a grant (an access token, typ at+jwt)", async () => {
    const idp = await fakeIdp();
    const client = await trustingClient(svc, idp);
    const user = (await signUp(svc)).user;
    const response = await redeem(svc, client, await idp.sign({ sub: user.id }, { typ: "at+jwt" }));
    await refused(response, "not an authorization grant");
  });

  it("refuses an assertion naming this server as its issuer (its own tokens never come back as grants)", async () => {
    const idp = await fakeIdp();
    const client = await trustingClient(svc, idp, {
      trustedIssuers: [{ issuer: ISSUER, jwks: { keys: [idp.publicJwk] } }],
    });
    const user = (await signUp(svc)).user;
    await refused(await redeem(svc, client, await idp.sign({ sub: user.id, iss: ISSUER })), "this server");
  });

  it("names users by their id only: an email, an unknown id or a disabled user is refused (account takeover)", async () => {
    const idp = await fakeIdp();
    const client = await trustingClient(svc, idp);
    const session = await signUp(svc);
    await refused(
      await redeem(svc, client, await idp.sign({ sub: session.user.email })),
      "not an enabled user",
    );
    await refused(
      await redeem(svc, client, await idp.sign({ sub: crypto.randomUUID() })),
      "not an enabled user",
    );
    await userD1(session.user.id)
      .prepare("UPDATE users SET disabled = 1 WHERE id = ?")
      .bind(session.user.id)
      .run();
    await refused(await redeem(svc, client, await idp.sign({ sub: session.user.id })), "not an enabled user");
  });

  it("refuses a scope beyond the client's and a resource it may not reach", async () => {
    const idp = await fakeIdp();
    const client = await trustingClient(svc, idp, { scopes: ["openid"] });
    const user = (await signUp(svc)).user;
    await oauth2Error(
      await redeem(svc, client, await idp.sign({ sub: user.id }), { scope: "openid graphql" }),
      400,
      "invalid_scope",
    );
    await oauth2Error(
      await redeem(svc, client, await idp.sign({ sub: user.id }), { resource: "https://evil.example.com" }),
      400,
      "invalid_target",
    );
  });

  it("answers garbage assertions with a 4xx, never a 5xx (hostile input)", async () => {
    const idp = await fakeIdp();
    const client = await trustingClient(svc, idp);
    const encode = (value: unknown) => base64url.encode(JSON.stringify(value));
    for (const assertion of [
      "not-a-jwt",
      "a.b.c",
      `${encode({ alg: "ES256" })}.${encode("just a string")}.sig`,
      `${encode({ alg: "ES256", kid: idp.kid, crit: ["x"], x: 1 })}.${encode({ iss: idp.issuer, sub: "u" })}.c2ln`,
      `${encode({ alg: "RSA-OAEP", enc: "A256GCM" })}.a.b.c.d`,
      "x".repeat(9000),
    ]) {
      const response = await redeem(svc, client, assertion);
      expect(response.status, assertion.slice(0, 60)).toBe(400);
    }
  });

  it("refuses a client without the grant, and a request without an assertion", async () => {
    const idp = await fakeIdp();
    const client = await trustingClient(svc, idp, { grantTypes: ["client_credentials"] });
    const user = (await signUp(svc)).user;
    await oauth2Error(
      await redeem(svc, client, await idp.sign({ sub: user.id })),
      400,
      "unauthorized_client",
    );
    const allowed = await trustingClient(svc, idp);
    await oauth2Error(
      await postForm(svc, "/oauth2/token", { grant_type: JWT_BEARER }, basic(allowed)),
      400,
      "invalid_request",
    );
  });

  it("fetches the issuer's keys from its jwksUri, caches them, and looks again for a new key id (rotation)", async () => {
    const idp = await fakeIdp();
    const rotated = await fakeIdp();
    const jwksUri = await publishKeys([idp.publicJwk]);
    const client = await trustingClient(svc, idp, {}, jwksUri);
    const user = (await signUp(svc)).user;
    expect((await redeem(svc, client, await idp.sign({ sub: user.id }))).status).toBe(200);
    expect((await redeem(svc, client, await idp.sign({ sub: user.id }))).status).toBe(200);
    expect(await fetchesOf(jwksUri)).toBe(1);
    // The issuer rotates to a new key, published at the same URI: the first assertion naming it makes one fetch.
    await publishKeys([idp.publicJwk, rotated.publicJwk], jwksUri);
    expect((await redeem(svc, client, await rotated.sign({ sub: user.id, iss: idp.issuer }))).status).toBe(
      200,
    );
    expect(await fetchesOf(jwksUri)).toBe(2);
    // Threat: made-up key ids cannot make the service fetch again and again (no fetch amplification): none for
    // 30 s after a fetch made for an unknown key id, then one.
    const stranger = await fakeIdp();
    await refused(
      await redeem(svc, client, await stranger.sign({ sub: user.id, iss: idp.issuer })),
      "not signed by a key",
    );
    await refused(
      await redeem(svc, client, await stranger.sign({ sub: user.id, iss: idp.issuer })),
      "not signed by a key",
    );
    expect(await fetchesOf(jwksUri)).toBe(2);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 31_000);
    await refused(
      await redeem(svc, client, await stranger.sign({ sub: user.id, iss: idp.issuer })),
      "not signed by a key",
    );
    expect(await fetchesOf(jwksUri)).toBe(3);
  });

  it("answers one invalid_grant whatever went wrong fetching the keys (no map of which hosts answer)", async () => {
    const idp = await fakeIdp();
    const user = (await signUp(svc)).user;
    for (const jwksUri of [
      "https://client-docs.fake/redirect/keys.json",
      "https://client-docs.fake/big.json",
    ]) {
      const client = await trustingClient(svc, idp, {}, jwksUri);
      await refused(await redeem(svc, client, await idp.sign({ sub: user.id })), "keys could not be fetched");
    }
  });

  it("refuses an issuer key set served by the service itself (admin API), so no stored file can pose as an issuer", async () => {
    const idp = await fakeIdp();
    const production = provider({
      AUTH_SERVER_URL: "https://auth.example.com/auth/v1",
      STORAGE_SERVER_URL: "https://files.example.com",
      AUTH_DEV_MAILBOX: "false",
    });
    const local = provider({ AUTH_OUTBOUND_ALLOW_LOCAL: "true" });
    for (const [service, jwksUri] of [
      [production, "https://files.example.com/storage/v1/files/public/keys.json"],
      [production, "https://auth.example.com/auth/v1/oauth2/jwks"],
      [local, `${SERVER}/storage/v1/files/keys.json`],
    ] as const) {
      const response = await service.request("POST", "/admin/oauth2/clients", {
        headers: ADMIN,
        json: {
          clientName: "Self-vouching",
          redirectUris: [],
          grantTypes: [JWT_BEARER],
          trustedIssuers: [{ issuer: idp.issuer, jwksUri }],
        },
      });
      expect(response.status, jwksUri).toBe(400);
    }
    const publicClient = await svc.request("POST", "/admin/oauth2/clients", {
      headers: ADMIN,
      json: {
        clientName: "Public",
        redirectUris: [],
        grantTypes: [JWT_BEARER],
        tokenEndpointAuthMethod: "none",
      },
    });
    expect(publicClient.status).toBe(400);
  });
});

/** The grants a user holds for a client, in every shard. */
const grantsOf = (clientId: string, userId: string) =>
  allInShards("SELECT id FROM oauth2_grants WHERE client_id = ? AND user_id = ?", clientId, userId);

/** A client trusting a fresh issuer, a user of this service, and an assertion naming them (an ID-JAG if asked). */
async function anAssertion(kind: "a JWT bearer assertion" | "an ID-JAG" = "a JWT bearer assertion") {
  const idp = await fakeIdp();
  const client = await trustingClient(svc, idp, { resources: [API] });
  const user = (await signUp(svc)).user;
  const assertion =
    kind === "an ID-JAG"
      ? await idp.sign(
          { sub: user.id, client_id: client.clientId, resource: API },
          { typ: "oauth-id-jag+jwt" },
        )
      : await idp.sign({ sub: user.id });
  return { client, user, assertion };
}

/** After the 503: the same assertion gets a token of one grant, and is spent by it (a third use is a replay). */
async function expectRetryRedeems(
  faulty: ReturnType<typeof provider>,
  taken: Awaited<ReturnType<typeof anAssertion>>,
) {
  const { client, user, assertion } = taken;
  const retry = await redeem(faulty, client, assertion);
  expect(retry.status, await retry.clone().text()).toBe(200);
  expect(decodeJwt(((await retry.json()) as TokenAnswer).access_token).payload.sub).toBe(user.id);
  expect(await grantsOf(client.clientId, user.id)).toHaveLength(1);
  await refused(await redeem(faulty, client, assertion), "used before");
}

describe("JWT bearer grant: a platform fault after the assertion's jti was taken", () => {
  // Threat: a platform fault after the jti was taken (503, which the client retries as it asks): the retry with the
  // same assertion refused as a replay, sending the agent back to its IdP though no token was ever issued, and a grant
  // left in the user's authorizations that no answer carried. The grant's insert run and its answer lost, or the
  // signing key set's read (a cold isolate's first, after the grant was written) failing once.
  it.each([
    [
      "a JWT bearer assertion",
      "the grant's insert runs, its answer lost",
      /insert into "oauth2_grants"/i,
      "after",
    ],
    ["an ID-JAG", "the grant's insert runs, its answer lost", /insert into "oauth2_grants"/i, "after"],
    ["a JWT bearer assertion", "the signing key set cannot be read after the grant", /^SELECT kid/, "before"],
  ] as const)(
    "%s, %s: 503, no grant left; the same assertion then redeems, once",
    async (kind, _, match, when) => {
      const taken = await anAssertion(kind);
      // A fresh service: a cold isolate, whose key set is read from D1 when the token is signed.
      const { bindings, fault } = failingShards(env, { match, when, times: 1 });
      const faulty = provider({ AUTH_OAUTH2_PROVIDER_RESOURCES: API, ...bindings });
      await expectOAuth2Unavailable(await redeem(faulty, taken.client, taken.assertion));
      expect(fault.failures).toBe(1);
      expect(await grantsOf(taken.client.clientId, taken.user.id)).toEqual([]);
      await expectRetryRedeems(faulty, taken);
    },
  );

  // Threat: the JTI ledger records the claim and the object resets before it answers: the request cannot know its
  // claim stood, answers 503, and the retry with the same assertion met its own claim as a replay.
  it("the ledger's claim runs and its answer is lost: 503, then the same assertion redeems, once", async () => {
    const taken = await anAssertion();
    const { binding, fault } = failingNamespace(env.JTI_LEDGERS, {
      match: /^claim$/,
      when: "after",
      times: 1,
    });
    const faulty = provider({ AUTH_OAUTH2_PROVIDER_RESOURCES: API, JTI_LEDGERS: binding });
    await expectOAuth2Unavailable(await redeem(faulty, taken.client, taken.assertion));
    expect(fault.failures).toBe(1);
    await expectRetryRedeems(faulty, taken);
  });

  // Threat: a release that takes another request's claim with it. The assertion was redeemed; its replay meets a
  // ledger too busy to run the claim (overloaded: 503) and releases "its" claim, which never ran: the row is the first
  // redemption's (same jti, same exp). Removed, a third presentation would get a second token from one assertion.
  it("a claim that never ran releases nothing: the first redemption's claim stands against later replays", async () => {
    const taken = await anAssertion();
    expect((await redeem(svc, taken.client, taken.assertion)).status).toBe(200);
    const { binding, fault } = failingNamespace(env.JTI_LEDGERS, { match: /^claim$/, times: 1 });
    const faulty = provider({ AUTH_OAUTH2_PROVIDER_RESOURCES: API, JTI_LEDGERS: binding });
    await expectOAuth2Unavailable(await redeem(faulty, taken.client, taken.assertion));
    expect(fault.failures).toBe(1);
    await refused(await redeem(faulty, taken.client, taken.assertion), "used before");
    expect(await grantsOf(taken.client.clientId, taken.user.id)).toHaveLength(1);
  });

  // Threat: a put-back that also undid refusals would let an assertion refused after its jti was taken (a disabled
  // user, an issuer that may not name them) be presented again and again until the refusal no longer holds. Only a
  // fault puts it back: a refused assertion stays spent.
  it("a refusal after the jti was taken (a disabled user) keeps the assertion spent", async () => {
    const taken = await anAssertion();
    const setDisabled = (disabled: 0 | 1) =>
      userD1(taken.user.id)
        .prepare("UPDATE users SET disabled = ? WHERE id = ?")
        .bind(disabled, taken.user.id)
        .run();
    await setDisabled(1);
    await refused(await redeem(svc, taken.client, taken.assertion), "not an enabled user");
    await setDisabled(0);
    await refused(await redeem(svc, taken.client, taken.assertion), "used before");
    expect(await grantsOf(taken.client.clientId, taken.user.id)).toEqual([]);
  });
});
