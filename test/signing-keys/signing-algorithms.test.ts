// Signing algorithms (docs/decisions.md, "Signing algorithms"): EdDSA and ES256 besides the default RS256. Threats:
// algorithm confusion (a token whose `alg` is not its key's: RFC 8725 §3.1) during a switch, when keys of two
// algorithms are published at once; a private member of a key reaching the JWKS.
import { env } from "cloudflare:test";
import {
  createLocalJWKSet,
  decodeProtectedHeader,
  exportJWK,
  exportPKCS8,
  generateKeyPair,
  jwtVerify,
  SignJWT,
} from "jose";
import { describe, expect, it } from "vitest";
import { generatePrivateJwk, type SigningAlgorithm } from "../../src/lib/key-algorithms";
import { getConfig } from "../../src/runtime/config";
import { HASURA_NAMESPACE, signAccessToken, verifyAccessToken } from "../../src/signing-keys/jwt";
import { getKeySet } from "../../src/signing-keys/keys";

const claims = { "x-hasura-user-id": "u1" };

async function keyOf(alg: SigningAlgorithm, kid: string) {
  return { ...(await generatePrivateJwk(alg)), kid };
}

describe.each(["EdDSA", "ES256"] as const)("access tokens signed with %s", (alg) => {
  it("signs, publishes the right key type without its private part, and keeps RS256 tokens verifying", async () => {
    const [fast, rsa] = [await keyOf(alg, `fast-${alg}`), await keyOf("RS256", "rsa")];
    const switched = getConfig({ ...env, AUTH_JWT_PRIVATE_KEYS: JSON.stringify([fast, rsa]) });
    const before = getConfig({ ...env, AUTH_JWT_PRIVATE_KEYS: JSON.stringify([rsa]) });

    const token = await signAccessToken(switched, "u1", claims, Date.now());
    expect(decodeProtectedHeader(token)).toMatchObject({ alg, kid: fast.kid, typ: "JWT" });
    expect((await verifyAccessToken(switched, token))?.[HASURA_NAMESPACE]).toEqual(claims);

    const keys = await getKeySet(switched);
    const published = keys.jwks.find((key) => key.kid === fast.kid)!;
    expect(published).toMatchObject(
      alg === "EdDSA" ? { kty: "OKP", crv: "Ed25519", alg, use: "sig" } : { kty: "EC", crv: "P-256", alg },
    );
    expect(keys.jwks.some((key) => "d" in key)).toBe(false);
    // What a resource server (Hasura with jwk_url) does: verify against the published set alone.
    const { payload } = await jwtVerify(token, createLocalJWKSet({ keys: keys.jwks }), {
      issuer: switched.urls.server,
    });
    expect(payload.sub).toBe("u1");

    // During the switch: a token of the previous algorithm verifies with its own key.
    const older = await signAccessToken(before, "u1", claims, Date.now());
    expect(decodeProtectedHeader(older).alg).toBe("RS256");
    expect((await verifyAccessToken(switched, older))?.sub).toBe("u1");
    // ID tokens stay RS256: the RSA key signs them.
    expect(keys.idTokenSigner).toMatchObject({ kid: "rsa", alg: "RS256" });
    expect(keys.signer).toMatchObject({ kid: fast.kid, alg });
  });

  it("refuses a token whose alg is not its key's", async () => {
    const [fast, rsa] = [await keyOf(alg, `fast-${alg}`), await keyOf("RS256", "rsa")];
    const config = getConfig({ ...env, AUTH_JWT_PRIVATE_KEYS: JSON.stringify([fast, rsa]) });
    const base = () =>
      new SignJWT({ [HASURA_NAMESPACE]: claims })
        .setSubject("u1")
        .setIssuer(config.urls.server)
        .setIssuedAt()
        .setExpirationTime("5m");
    // Signed by the RSA key, but naming the fast key's kid: the kid's key is of another algorithm.
    const { privateKey: rsaKey } = await generateKeyPair("RS256");
    const rsaWithFastKid = await base().setProtectedHeader({ alg: "RS256", kid: fast.kid }).sign(rsaKey);
    expect(await verifyAccessToken(config, rsaWithFastKid)).toBeNull();
    // A genuine signature by our fast key, relabelled with the RSA kid.
    const keys = await getKeySet(config);
    const genuine = await base().setProtectedHeader({ alg, kid: "rsa" }).sign(keys.signer.key);
    expect(await verifyAccessToken(config, genuine)).toBeNull();
  });
});

describe("Hasura-style secret with Ed25519", () => {
  it("accepts HASURA_GRAPHQL_JWT_SECRET of type Ed25519 (Hasura's own name for it)", async () => {
    const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
    const secret = JSON.stringify({ type: "Ed25519", signing_key: await exportPKCS8(privateKey), kid: "ed" });
    const config = getConfig({ ...env, AUTH_JWT_PRIVATE_KEYS: undefined, HASURA_GRAPHQL_JWT_SECRET: secret });
    const token = await signAccessToken(config, "u2", claims, Date.now());
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: "EdDSA", kid: "ed" });
    expect((await verifyAccessToken(config, token))?.sub).toBe("u2");
    // No RSA key at all: ID tokens are signed with what there is.
    expect((await getKeySet(config)).idTokenSigner.alg).toBe("EdDSA");
  });

  it("refuses a key type it does not sign with (P-384) naming the variable", async () => {
    const { privateKey } = await generateKeyPair("ES384", { extractable: true });
    const config = getConfig({
      ...env,
      AUTH_JWT_PRIVATE_KEYS: JSON.stringify([{ ...(await exportJWK(privateKey)), kid: "p384" }]),
    });
    await expect(getKeySet(config)).rejects.toThrow(/AUTH_JWT_PRIVATE_KEYS must hold private JWKs/);
  });
});
