import { type CryptoKey, exportJWK, importJWK, importPKCS8, type JWK } from "jose";
import { z } from "zod";
import type { Config } from "../config";
import { ConfigError } from "../config";

/**
 * The signing key set. `AUTH_JWT_PRIVATE_KEYS` is a JSON array of private RSA JWKs: the first signs, every one is
 * published in the JWKS and accepted for verification, so a key can be rotated in without logging anyone out.
 * The Hasura-style `HASURA_GRAPHQL_JWT_SECRET` (`type`, `key`, `signing_key`, `kid`) is accepted too.
 */

export const JWT_ALG = "RS256";

export interface PublicJwk {
  alg: string;
  e: string;
  kid: string;
  kty: string;
  n: string;
  use: string;
}

export interface KeySet {
  signingKid: string;
  signingKey: CryptoKey;
  verifyKeys: Map<string, CryptoKey>;
  jwks: PublicJwk[];
}

const privateJwk = z.looseObject({
  kty: z.literal("RSA"),
  kid: z.string().min(1),
  n: z.string(),
  e: z.string(),
  d: z.string(),
});

const hasuraSecret = z.object({
  type: z.literal(JWT_ALG),
  signing_key: z.string().includes("PRIVATE KEY"),
  kid: z.string().min(1).optional(),
});

const cache = new WeakMap<Config, Promise<KeySet>>();

export function getKeySet(config: Config): Promise<KeySet> {
  let keys = cache.get(config);
  if (!keys) {
    keys = loadKeySet(config);
    cache.set(config, keys);
    // A bad key must not poison the isolate forever.
    keys.catch(() => cache.delete(config));
  }
  return keys;
}

async function loadKeySet(config: Config): Promise<KeySet> {
  const privateKeys = config.AUTH_JWT_PRIVATE_KEYS
    ? await fromJwkList(config.AUTH_JWT_PRIVATE_KEYS)
    : await fromHasuraSecret(config.HASURA_GRAPHQL_JWT_SECRET ?? "");
  const verifyKeys = new Map<string, CryptoKey>();
  const jwks: PublicJwk[] = [];
  for (const { kid, key } of privateKeys) {
    const { n, e } = await exportJWK(key);
    const publicJwk = { alg: JWT_ALG, e: e!, kid, kty: "RSA", n: n!, use: "sig" };
    verifyKeys.set(kid, (await importJWK(publicJwk, JWT_ALG)) as CryptoKey);
    jwks.push(publicJwk);
  }
  const [first] = privateKeys;
  if (!first) throw new ConfigError("invalid configuration: AUTH_JWT_PRIVATE_KEYS holds no key");
  return { signingKid: first.kid, signingKey: first.key, verifyKeys, jwks };
}

function parseJsonVariable(name: string, json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    throw new ConfigError(`invalid configuration: ${name} is not JSON`);
  }
}

async function fromJwkList(json: string): Promise<{ kid: string; key: CryptoKey }[]> {
  const parsed = parseJsonVariable("AUTH_JWT_PRIVATE_KEYS", json);
  const list = z
    .array(privateJwk)
    .min(1)
    .safeParse(Array.isArray(parsed) ? parsed : [parsed]);
  if (!list.success) {
    throw new ConfigError(
      "invalid configuration: AUTH_JWT_PRIVATE_KEYS must hold private RSA JWKs with a kid",
    );
  }
  return Promise.all(
    list.data.map(async (jwk) => ({
      kid: jwk.kid,
      key: (await importJWK({ ...(jwk as JWK), alg: JWT_ALG }, JWT_ALG, { extractable: true })) as CryptoKey,
    })),
  );
}

async function fromHasuraSecret(json: string): Promise<{ kid: string; key: CryptoKey }[]> {
  const secret = hasuraSecret.safeParse(parseJsonVariable("HASURA_GRAPHQL_JWT_SECRET", json));
  if (!secret.success) {
    throw new ConfigError(
      "invalid configuration: HASURA_GRAPHQL_JWT_SECRET needs type RS256 and a PEM signing_key",
    );
  }
  const key = await importPKCS8(secret.data.signing_key, JWT_ALG, { extractable: true });
  return [{ kid: secret.data.kid ?? "hasura", key }];
}
