import { type CryptoKey, exportJWK, importPKCS8, type JWK } from "jose";
import { z } from "zod";
import type { Config } from "../config";
import { ConfigError } from "../errors";
import {
  importKey,
  type PublicJwk,
  privateJwkSchema,
  publicJwkOf,
  type SigningAlgorithm,
} from "../lib/key-algorithms";
import { settledMemo } from "../lib/settled";
import { publicKeyOf, signingKeyOf, storedKeys } from "./stored-keys";

export type { PublicJwk, SigningAlgorithm } from "../lib/key-algorithms";

/**
 * The signing key set. `AUTH_JWT_PRIVATE_KEYS` is a JSON array of private JWKs (RSA, EC P-256 or Ed25519: the
 * algorithm follows from the key, src/lib/key-algorithms.ts): the first signs, every one is published in the JWKS
 * and accepted for verification, so a key can be rotated in, even one of another algorithm, without logging anyone
 * out. The Hasura-style `HASURA_GRAPHQL_JWT_SECRET` (`type` RS256 or Ed25519, `signing_key`, `kid`) is accepted too.
 */

/** A key that signs: its kid and algorithm go in the token's header. */
export interface Signer {
  kid: string;
  alg: SigningAlgorithm;
  key: CryptoKey;
}

export interface KeySet {
  /** Signs access tokens (sessions' and OAuth2's). */
  signer: Signer;
  /**
   * Signs OpenID Connect ID tokens: RS256, which every relying party must accept and expects by default (OIDC
   * Core §3.1.3.7, Discovery §3), while another algorithm signs access tokens: the newest RSA key of the set. Only a
   * set with no RSA key at all signs ID tokens with `signer`.
   */
  idTokenSigner: Signer;
  verifyKeys: Map<string, { alg: SigningAlgorithm; key: CryptoKey }>;
  jwks: PublicJwk[];
}

/** Hasura's names for the algorithms of its JWT `type` that this service signs with. */
const HASURA_TYPES: Record<string, SigningAlgorithm> = { RS256: "RS256", Ed25519: "EdDSA" };

const hasuraSecret = z.object({
  type: z.enum(Object.keys(HASURA_TYPES) as [string, ...string[]]),
  signing_key: z.string().includes("PRIVATE KEY"),
  kid: z.string().min(1).optional(),
});

/**
 * How long an isolate trusts its copy of the key set: `config.keySetTtlMs`, 10 s (a local test server may shorten it).
 * Another isolate's rotation or deletion is seen within this time; a token signed with a key this isolate has not seen
 * yet makes it look again at once (`unknownKid`, at most once a second). The isolate that rotated or deleted sees it
 * immediately (`forgetKeySet`).
 */
const UNKNOWN_KID_RECHECK_MS = 1_000;

interface ConfiguredKey extends Signer {
  publicJwk: PublicJwk;
  verifyKey: CryptoKey;
}

/**
 * Everything cached here is settled (src/lib/settled.ts): a request whose copy is stale reads the key set itself
 * and publishes the result; it never waits on another request's read.
 */
const configured = settledMemo<Config, ConfiguredKey[]>();
const cache = new WeakMap<Config, { loadedAt: number; keys: KeySet }>();
/** Bumped by `forgetKeySet`: a read that started before a rotation must not publish the key set from before it. */
let generation = 0;

async function withPublicHalf({ kid, key }: { kid: string; key: CryptoKey }): Promise<ConfiguredKey> {
  const publicJwk = publicJwkOf(kid, await exportJWK(key));
  return { kid, alg: publicJwk.alg, key, publicJwk, verifyKey: await importKey(publicJwk) };
}

/** The configured keys, parsed once per configuration (a bad key throws every time: nothing is memoised). */
function configuredKeys(config: Config): Promise<ConfiguredKey[]> {
  return configured.get(config, async () => {
    const list = config.secrets.jwtPrivateKeys
      ? await fromJwkList(config.secrets.jwtPrivateKeys)
      : await fromHasuraSecret(config.secrets.hasuraJwtSecret ?? "");
    return Promise.all(list.map(withPublicHalf));
  });
}

export async function getKeySet(config: Config, options: { unknownKid?: boolean } = {}): Promise<KeySet> {
  const startedAt = Date.now();
  const cached = cache.get(config);
  const age = cached ? startedAt - cached.loadedAt : Number.POSITIVE_INFINITY;
  if (cached && age < (options.unknownKid ? UNKNOWN_KID_RECHECK_MS : config.keySetTtlMs)) return cached.keys;
  const readGeneration = generation;
  let keys: KeySet;
  try {
    keys = await loadKeySet(config, cached !== undefined && !options.unknownKid);
  } catch (error) {
    // D1 unreachable while refreshing: keep signing and verifying with the keys we had. Not for a look for a kid the
    // set lacks: the keys we had cannot answer it, and "not our key" would be a verdict (the caller's 503 instead).
    if (cached && !options.unknownKid) return cached.keys;
    throw error;
  }
  const latest = cache.get(config);
  if (readGeneration === generation && (!latest || latest.loadedAt <= startedAt)) {
    cache.set(config, { loadedAt: startedAt, keys });
  }
  return keys;
}

/** Bumped by every rotation or deletion in this isolate: what was verified before is verified again. */
export function keySetGeneration(): number {
  return generation;
}

/** After a rotation or a deletion in this isolate: the next use reads the key set again. */
export function forgetKeySet(config: Config): void {
  generation++;
  cache.delete(config);
}

/**
 * The newest stored key with status `signing` signs; without one, the first configured key does. Every key, stored
 * or configured, verifies and is published. ID tokens: see `KeySet.idTokenSigner`.
 */
async function loadKeySet(config: Config, nearby: boolean): Promise<KeySet> {
  const [fromConfig, stored] = await Promise.all([configuredKeys(config), storedKeys(config, nearby)]);
  const storedEntries = stored.map((row) => ({
    row,
    publicJwk: publicJwkOf(row.kid, JSON.parse(row.public_jwk)),
  }));
  const verifyKeys: KeySet["verifyKeys"] = new Map();
  for (const { row, publicJwk } of storedEntries) {
    verifyKeys.set(row.kid, { alg: publicJwk.alg, key: await publicKeyOf(row) });
  }
  for (const { kid, alg, verifyKey } of fromConfig) verifyKeys.set(kid, { alg, key: verifyKey });
  const jwks = [
    ...storedEntries.map(({ publicJwk }) => publicJwk),
    ...fromConfig.map(({ publicJwk }) => publicJwk),
  ];

  /** A stored key as a signer (its private half is opened once per kid). */
  const storedSigner = async ({ row, publicJwk }: (typeof storedEntries)[number]): Promise<Signer> => ({
    kid: row.kid,
    alg: publicJwk.alg,
    key: await signingKeyOf(config, row),
  });
  const signing = storedEntries.find(({ row }) => row.status === "signing");
  const [firstConfigured] = fromConfig;
  if (!signing && !firstConfigured) {
    throw new ConfigError("invalid configuration: AUTH_JWT_PRIVATE_KEYS holds no key");
  }
  const signer = signing ? await storedSigner(signing) : firstConfigured!;
  if (signer.alg === "RS256") return { signer, idTokenSigner: signer, verifyKeys, jwks };
  // Newest RSA key: stored keys come newest first, then the configured ones.
  const storedRsa = storedEntries.find(({ publicJwk }) => publicJwk.alg === "RS256");
  const configuredRsa = fromConfig.find(({ alg }) => alg === "RS256");
  const idTokenSigner = storedRsa ? await storedSigner(storedRsa) : (configuredRsa ?? signer);
  return { signer, idTokenSigner, verifyKeys, jwks };
}

/** The kids configured in `AUTH_JWT_PRIVATE_KEYS` / `HASURA_GRAPHQL_JWT_SECRET`: listed, never deleted by the API. */
export async function configuredKids(config: Config): Promise<string[]> {
  return (await configuredKeys(config)).map(({ kid }) => kid);
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
    .array(privateJwkSchema)
    .min(1)
    .safeParse(Array.isArray(parsed) ? parsed : [parsed]);
  if (!list.success) {
    throw new ConfigError(
      "invalid configuration: AUTH_JWT_PRIVATE_KEYS must hold private JWKs (RSA, EC P-256 or Ed25519) with a kid",
    );
  }
  return Promise.all(
    list.data.map(async (jwk) => ({
      kid: jwk.kid,
      key: await importKey(jwk as JWK, { extractable: true }),
    })),
  );
}

async function fromHasuraSecret(json: string): Promise<{ kid: string; key: CryptoKey }[]> {
  const secret = hasuraSecret.safeParse(parseJsonVariable("HASURA_GRAPHQL_JWT_SECRET", json));
  if (!secret.success) {
    throw new ConfigError(
      "invalid configuration: HASURA_GRAPHQL_JWT_SECRET needs type RS256 or Ed25519 and a PEM signing_key",
    );
  }
  const key = await importPKCS8(secret.data.signing_key, HASURA_TYPES[secret.data.type]!, {
    extractable: true,
  });
  return [{ kid: secret.data.kid ?? "hasura", key }];
}
