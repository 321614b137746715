import { importSPKI, jwtVerify } from "jose";
import { z } from "zod";

/**
 * Access tokens the old Nhost project signed before the cut-over (contract move-in §3): `AUTH_IMPORTED_JWT_SECRET`
 * holds that project's `HASURA_GRAPHQL_JWT_SECRET` (`{"type":"HS256","key":"…"}`, or RS256/384/512 with a PEM public
 * key), and such tokens are accepted wherever the service's own are, until they expire. The service never signs with
 * it. Only the named algorithm is accepted (no `alg` confusion, RFC 8725 §3.1), with the old issuer (`hasura-auth`
 * unless `issuer` says otherwise) and an `exp`.
 */

const HMAC = ["HS256", "HS384", "HS512"] as const;
const RSA = ["RS256", "RS384", "RS512"] as const;

export const importedJwtSecretSchema = z.object({
  type: z.enum([...HMAC, ...RSA]),
  key: z.string().min(1),
  issuer: z.string().min(1).optional(),
  claims_namespace: z.string().min(1).optional(),
});

export type ImportedJwtSecret = z.infer<typeof importedJwtSecretSchema>;

/** The variable's JSON, checked: an HMAC key shorter than 32 characters is refused as Hasura refuses it. */
export function parseImportedJwtSecret(json: string): ImportedJwtSecret | string {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return 'must be the old project\'s HASURA_GRAPHQL_JWT_SECRET JSON, e.g. {"type":"HS256","key":"…"}';
  }
  const parsed = importedJwtSecretSchema.safeParse(value);
  if (!parsed.success) return "needs type HS256/384/512 or RS256/384/512 and its key";
  if ((HMAC as readonly string[]).includes(parsed.data.type) && parsed.data.key.length < 32)
    return "an HMAC key must be at least 32 characters";
  if ((RSA as readonly string[]).includes(parsed.data.type) && !parsed.data.key.includes("BEGIN PUBLIC KEY"))
    return "an RS key must be a PEM public key (-----BEGIN PUBLIC KEY-----)";
  return parsed.data;
}

const keys = new WeakMap<ImportedJwtSecret, Promise<CryptoKey | Uint8Array>>();

function keyOf(secret: ImportedJwtSecret): Promise<CryptoKey | Uint8Array> {
  let key = keys.get(secret);
  if (!key) {
    key = secret.type.startsWith("HS")
      ? Promise.resolve(new TextEncoder().encode(secret.key))
      : importSPKI(secret.key, secret.type);
    keys.set(secret, key);
  }
  return key;
}

/**
 * The token's payload with its claims under the service's namespace, or null for anything else. `namespace` is the
 * claims namespace the service's own tokens use.
 */
export async function verifyImportedToken(
  secret: ImportedJwtSecret,
  token: string,
  namespace: string,
): Promise<Record<string, unknown> | null> {
  try {
    const { payload } = await jwtVerify(token, await keyOf(secret), {
      algorithms: [secret.type],
      issuer: secret.issuer ?? "hasura-auth",
      requiredClaims: ["exp", "sub"],
    });
    const claims = payload[secret.claims_namespace ?? namespace];
    if (typeof claims !== "object" || claims === null) return null;
    const userId = (claims as Record<string, unknown>)["x-hasura-user-id"];
    if (typeof userId === "string" && userId !== payload.sub) return null;
    return { ...payload, [namespace]: claims };
  } catch {
    return null;
  }
}
