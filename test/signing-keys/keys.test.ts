import { env } from "cloudflare:test";
import { exportJWK, exportPKCS8, generateKeyPair, SignJWT, UnsecuredJWT } from "jose";
import { describe, expect, it } from "vitest";
import { getConfig } from "../../src/runtime/config";
import { HASURA_NAMESPACE, signAccessToken, verifyAccessToken } from "../../src/signing-keys/jwt";
import { getKeySet } from "../../src/signing-keys/keys";

async function privateJwk(kid: string) {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: "RS256" };
}

const claims = { "x-hasura-user-id": "u1" };

describe("signing keys and access tokens", () => {
  it("signs with the first key, publishes all, and still accepts tokens of a previous key", async () => {
    const [current, previous] = [await privateJwk("current"), await privateJwk("previous")];
    const rotated = getConfig({ ...env, AUTH_JWT_PRIVATE_KEYS: JSON.stringify([current, previous]) });
    const old = getConfig({ ...env, AUTH_JWT_PRIVATE_KEYS: JSON.stringify([previous]) });

    const keys = await getKeySet(rotated);
    expect(keys.jwks.map((k) => k.kid)).toEqual(["current", "previous"]);
    expect(keys.jwks.every((k) => !("d" in k))).toBe(true);

    const fresh = await signAccessToken(rotated, "u1", claims, Date.now());
    expect(JSON.parse(atob(fresh.split(".")[0]!)).kid).toBe("current");
    const issuedBeforeRotation = await signAccessToken(old, "u1", claims, Date.now());
    expect((await verifyAccessToken(rotated, issuedBeforeRotation))?.sub).toBe("u1");
  });

  it("accepts the Hasura-style HASURA_GRAPHQL_JWT_SECRET", async () => {
    const { privateKey } = await generateKeyPair("RS256", { extractable: true });
    const secret = JSON.stringify({
      type: "RS256",
      signing_key: await exportPKCS8(privateKey),
      kid: "hasura-kid",
    });
    const config = getConfig({ ...env, AUTH_JWT_PRIVATE_KEYS: undefined, HASURA_GRAPHQL_JWT_SECRET: secret });
    const token = await signAccessToken(config, "u2", claims, Date.now());
    expect((await verifyAccessToken(config, token))?.[HASURA_NAMESPACE]).toEqual(claims);
    expect((await getKeySet(config)).jwks[0]?.kid).toBe("hasura-kid");
  });

  it("refuses tokens with another algorithm, an unknown kid, another issuer, or past expiry", async () => {
    const config = getConfig({ ...env });
    const { kid: signingKid } = (await getKeySet(config)).signer;
    const stranger = await generateKeyPair("RS256");
    const base = () =>
      new SignJWT({ [HASURA_NAMESPACE]: claims })
        .setSubject("u1")
        .setIssuer(config.urls.server)
        .setIssuedAt()
        .setExpirationTime("5m");

    const unknownKid = await base()
      .setProtectedHeader({ alg: "RS256", kid: "nope" })
      .sign(stranger.privateKey);
    const strangerWithOurKid = await base()
      .setProtectedHeader({ alg: "RS256", kid: signingKid })
      .sign(stranger.privateKey);
    const hmac = await base()
      .setProtectedHeader({ alg: "HS256", kid: signingKid })
      .sign(new TextEncoder().encode("x".repeat(32)));
    const none = new UnsecuredJWT({ [HASURA_NAMESPACE]: claims }).setSubject("u1").encode();

    for (const token of [unknownKid, strangerWithOurKid, hmac, none, "a.b.c", ""]) {
      expect(await verifyAccessToken(config, token)).toBeNull();
    }
    const otherIssuer = getConfig({
      ...env,
      AUTH_SERVER_URL: "https://other.example/auth/v1",
      AUTH_DEV_MAILBOX: "false",
    });
    expect(
      await verifyAccessToken(config, await signAccessToken(otherIssuer, "u1", claims, Date.now())),
    ).toBeNull();
    const expired = await signAccessToken(config, "u1", claims, Date.now() - 3600_000);
    expect(await verifyAccessToken(config, expired)).toBeNull();
  });
});

describe("bad signing-key configuration", () => {
  it.each([
    ["AUTH_JWT_PRIVATE_KEYS", "not json", /AUTH_JWT_PRIVATE_KEYS is not JSON/],
    ["AUTH_JWT_PRIVATE_KEYS", '[{"kty":"RSA"}]', /AUTH_JWT_PRIVATE_KEYS must hold private JWKs/],
    // An HS256 value is refused earlier, by getConfig (test/move-in/imported-secret-config.test.ts).
    ["HASURA_GRAPHQL_JWT_SECRET", '{"type":"ES512","key":"x"}', /HASURA_GRAPHQL_JWT_SECRET needs type RS256/],
  ])("%s = %s fails naming the variable", async (name, value, message) => {
    const bindings =
      name === "AUTH_JWT_PRIVATE_KEYS"
        ? { [name]: value }
        : { AUTH_JWT_PRIVATE_KEYS: undefined, [name]: value };
    await expect(getKeySet(getConfig({ ...env, ...bindings }))).rejects.toThrow(message);
  });
});
