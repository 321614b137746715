import { importSPKI, jwtVerify } from "jose";
import { z } from "zod";

/**
 * Access tokens the old Nhost project signed before the cut-over (contract move-in §3, supabase.md §6):
 * `AUTH_IMPORTED_JWT_SECRET` holds that project's `HASURA_GRAPHQL_JWT_SECRET` (`{"type":"HS256","key":"…"}`, or
 * RS256/384/512 with a PEM public key). The service never signs with it. This file checks what the token alone shows:
 * only the named algorithm (no `alg` confusion, RFC 8725 §3.1), the old issuer (`hasura-auth` unless `issuer` says
 * otherwise), `sub`, `iat` and `exp` present, a lifetime (`exp − iat`) within `AUTH_IMPORTED_JWT_MAX_LIFETIME`, and
 * the Hasura user id present and equal to `sub`. What needs the database or the clock (the recorded cut-over and its
 * ceiling, `exp`, the user's state) is src/http/imported-tokens.ts, which checks the ceiling before `exp` so that a
 * token presented after it is logged as what it is.
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

/** The systems whose tokens can be accepted after a move, and whose cut-over is recorded (supabase.md §6). */
export const IMPORTED_SYSTEMS = ["nhost", "supabase"] as const;
export type ImportedSystem = (typeof IMPORTED_SYSTEMS)[number];

/**
 * Marks a payload as an old system's token. A symbol, not a claim: no token, whoever signed it, can carry it, so
 * only this file's verification sets it, and every later check (src/http/auth.ts) reads it off the verified payload.
 */
export const IMPORTED = Symbol("imported-token");

/** A tolerance that makes jose's own `exp` and `nbf` checks pass whatever the clock says (a century, in seconds). */
const NO_CLOCK = 100 * 365 * 86_400;

/** The elevation claim (contract §6): never carried over from an old token, whatever the old key signed. */
const ELEVATED = "x-hasura-auth-elevated";

export interface ImportedTokenPayload {
  iss: string;
  sub: string;
  iat: number;
  exp: number;
  [IMPORTED]: ImportedSystem;
  [namespace: string]: unknown;
}

/**
 * The token's payload, reduced to what it may say here, with its claims under the service's namespace; null for
 * anything else. Its `exp` is not compared with the clock here (the caller does, after the ceiling). `namespace` is the claims namespace the service's own tokens use. What the old key signed beyond
 * the issuer, subject, times and Hasura claims (a `sid`, an `org_id`, a `cnf`) is dropped: those name state of this
 * service, which an old token cannot speak for.
 */
export async function verifyImportedToken(
  secret: ImportedJwtSecret,
  token: string,
  namespace: string,
  maxLifetime: number,
): Promise<ImportedTokenPayload | null> {
  try {
    const { payload } = await jwtVerify(token, await keyOf(secret), {
      algorithms: [secret.type],
      issuer: secret.issuer ?? "hasura-auth",
      requiredClaims: ["exp", "sub", "iat"],
      // Time is the caller's to check (above); `nbf` is refused below unless it is no later than `iat`.
      clockTolerance: NO_CLOCK,
    });
    const { iss, sub, iat, exp } = payload;
    if (!iss || !sub || typeof iat !== "number" || typeof exp !== "number") return null;
    // An audience means the token was made for someone else; a lifetime over the cap is a token minted to outlast
    // the move (a ten-year `exp` signed with a key the old project shared widely).
    if (payload.aud !== undefined || exp - iat > maxLifetime || exp <= iat) return null;
    if (payload.nbf !== undefined && payload.nbf > iat) return null;
    const claims = payload[secret.claims_namespace ?? namespace];
    if (typeof claims !== "object" || claims === null || Array.isArray(claims)) return null;
    const { [ELEVATED]: _elevated, ...kept } = claims as Record<string, unknown>;
    if (kept["x-hasura-user-id"] !== sub) return null;
    return { iss, sub, iat, exp, [namespace]: kept, [IMPORTED]: "nhost" };
  } catch {
    return null;
  }
}
