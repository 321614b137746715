import { type CryptoKey, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import { z } from "zod";

/**
 * The algorithms this service signs its JWTs with (docs/decisions.md, "Signing algorithms"). RS256 is the default,
 * as Nhost's. EdDSA (Ed25519) signs in a fraction of RS256's CPU and is one of the `type`s Hasura's JWT mode names;
 * ES256 is there for verifiers without EdDSA. A key's algorithm follows from its type, so a token's `alg` must be
 * its key's: verification looks the key up by `kid` and refuses any other `alg` (RFC 8725 §3.1).
 */
export const SIGNING_ALGORITHMS = ["RS256", "ES256", "EdDSA"] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];
export const DEFAULT_ALGORITHM: SigningAlgorithm = "RS256";

/** A published key as the JWKS shows it: RSA (`n`, `e`), EC P-256 (`crv`, `x`, `y`) or OKP Ed25519 (`crv`, `x`). */
export type KeyType = "RSA" | "EC" | "OKP";

export interface PublicJwk {
  kid: string;
  kty: KeyType;
  alg: SigningAlgorithm;
  use: "sig";
  n?: string;
  e?: string;
  crv?: string;
  x?: string;
  y?: string;
}

const rsa = z.looseObject({ kty: z.literal("RSA"), n: z.string(), e: z.string() });
const p256 = z.looseObject({ kty: z.literal("EC"), crv: z.literal("P-256"), x: z.string(), y: z.string() });
const ed25519 = z.looseObject({ kty: z.literal("OKP"), crv: z.literal("Ed25519"), x: z.string() });
const publicPart = z.union([rsa, p256, ed25519]);

/** A private JWK this service can sign with: one of the three key types, with its private part and a kid. */
export const privateJwkSchema = z.intersection(
  publicPart,
  z.looseObject({ kid: z.string().min(1), d: z.string() }),
);

/** The algorithm a key of this type signs with; undefined for a type this service does not sign with. */
export function algorithmOf(jwk: { kty?: unknown; crv?: unknown }): SigningAlgorithm | undefined {
  if (jwk.kty === "RSA") return "RS256";
  if (jwk.kty === "EC" && jwk.crv === "P-256") return "ES256";
  if (jwk.kty === "OKP" && jwk.crv === "Ed25519") return "EdDSA";
  return undefined;
}

/** The public members of a key, and nothing else (a private JWK's `d`, `p`, `q`, … never leave). */
export function publicMembers(jwk: JWK): Pick<PublicJwk, "kty" | "n" | "e" | "crv" | "x" | "y"> {
  const parsed = publicPart.parse(jwk);
  switch (parsed.kty) {
    case "RSA":
      return { kty: "RSA", n: parsed.n, e: parsed.e };
    case "EC":
      return { kty: "EC", crv: parsed.crv, x: parsed.x, y: parsed.y };
    default:
      return { kty: "OKP", crv: parsed.crv, x: parsed.x };
  }
}

export function publicJwkOf(kid: string, jwk: JWK): PublicJwk {
  const alg = algorithmOf(jwk);
  if (!alg) throw new Error(`key ${kid} is of a type this service does not sign with`);
  return { kid, ...publicMembers(jwk), alg, use: "sig" };
}

export async function importKey(jwk: JWK, options?: { extractable: boolean }): Promise<CryptoKey> {
  const alg = algorithmOf(jwk);
  if (!alg) throw new Error("a key of a type this service does not sign with");
  return (await importJWK({ ...jwk, alg }, alg, options)) as CryptoKey;
}

/** A new key pair of `alg` as a private JWK (RSA keys are 2048-bit, as Nhost's). */
export async function generatePrivateJwk(alg: SigningAlgorithm): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, {
    extractable: true,
    ...(alg === "RS256" ? { modulusLength: 2048 } : {}),
    ...(alg === "EdDSA" ? { crv: "Ed25519" } : {}),
  });
  return exportJWK(privateKey);
}
