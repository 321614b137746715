import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from "jose";
import { IMPORTED, type ImportedTokenPayload } from "./imported-tokens";

/**
 * Access tokens the old Supabase project signed before the cut-over (contract supabase.md §5–6), the part the token
 * alone shows; the part that needs the database and the clock is src/http/imported-tokens.ts `admitImported`, as for
 * Nhost's. `AUTH_IMPORTED_SUPABASE_JWT_SECRET` is either the project's legacy HS256 JWT secret (its raw UTF-8 bytes,
 * as GoTrue uses it) or, for a project on asymmetric signing keys, its JWKS (the public keys, as
 * `/auth/v1/.well-known/jwks.json` serves them). Checked: only the algorithm the secret names (HS256; RS256 or ES256
 * for a JWKS key: RFC 8725 §3.1, no `none`, no HS/RS confusion), the issuer `AUTH_IMPORTED_SUPABASE_ISSUER`, `sub`,
 * `iat`, `exp` and `session_id` present, `exp − iat` within the cap, `aud` and `role` GoTrue's `authenticated` (the
 * project's `anon` and `service_role` keys are JWTs under the same secret: they never pass as a user, supabase.md §1).
 */

export type ImportedSupabaseSecret =
  | { kind: "hs256"; key: Uint8Array }
  | { kind: "jwks"; keys: JSONWebKeySet; algorithms: string[] };

/** RFC 7518 §3.2, and Supabase's own project secrets (40 characters or more). */
const MIN_SECRET_LENGTH = 32;
const ASYMMETRIC: Record<string, string> = { RSA: "RS256", EC: "ES256" };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The variable, checked; a string is what is wrong with it. */
export function parseImportedSupabaseSecret(value: string): ImportedSupabaseSecret | string {
  const text = value.trim();
  if (!text.startsWith("{")) {
    if (text.length < MIN_SECRET_LENGTH)
      return `must be the old project's JWT secret (at least ${MIN_SECRET_LENGTH} characters) or its JWKS`;
    return { kind: "hs256", key: new TextEncoder().encode(value) };
  }
  let jwks: unknown;
  try {
    jwks = JSON.parse(text);
  } catch {
    return 'a JWKS must be JSON: {"keys":[…]}';
  }
  const keys = (jwks as { keys?: unknown }).keys;
  if (!Array.isArray(keys) || keys.length === 0) return 'a JWKS needs "keys"';
  const algorithms = new Set<string>();
  for (const key of keys as Record<string, unknown>[]) {
    const alg = ASYMMETRIC[String(key?.kty)];
    if (!alg || (key.alg !== undefined && key.alg !== alg))
      return "a JWKS holds RS256 (RSA) or ES256 (EC P-256) public keys only";
    if ("d" in key || "k" in key) return "a JWKS here holds public keys only: remove the private parts";
    algorithms.add(alg);
  }
  return { kind: "jwks", keys: { keys: keys as JSONWebKeySet["keys"] }, algorithms: [...algorithms] };
}

const keySets = new WeakMap<ImportedSupabaseSecret, ReturnType<typeof createLocalJWKSet>>();

/** A century: jose's own `exp`/`nbf` checks pass whatever the clock says; the caller checks time (after the ceiling). */
const NO_CLOCK = 100 * 365 * 86_400;

/**
 * The old token's payload reduced to what it may say here: `sub`, `iat`, `exp`, `session_id` (the GoTrue session,
 * which the import carried under the same id), and Hasura claims naming only the user (the roles are the user's here,
 * narrowed by `admitImported`). Null for anything else.
 */
export async function verifyImportedSupabaseToken(
  secret: ImportedSupabaseSecret,
  issuer: string,
  token: string,
  /** The claims namespace of the service's own tokens. */
  namespace: string,
  maxLifetime: number,
): Promise<(ImportedTokenPayload & { session_id: string }) | null> {
  try {
    const options = {
      issuer,
      audience: "authenticated",
      requiredClaims: ["exp", "sub", "iat", "session_id"],
      clockTolerance: NO_CLOCK,
    };
    let verified: Awaited<ReturnType<typeof jwtVerify>>;
    if (secret.kind === "hs256") {
      verified = await jwtVerify(token, secret.key, { ...options, algorithms: ["HS256"] });
    } else {
      let keySet = keySets.get(secret);
      if (!keySet) {
        keySet = createLocalJWKSet(secret.keys);
        keySets.set(secret, keySet);
      }
      verified = await jwtVerify(token, keySet, { ...options, algorithms: secret.algorithms });
    }
    const { iss, sub, iat, exp, nbf, role, session_id } = verified.payload;
    if (!iss || !sub || !UUID.test(sub) || typeof iat !== "number" || typeof exp !== "number") return null;
    if (role !== "authenticated" || typeof session_id !== "string" || !UUID.test(session_id)) return null;
    if (exp - iat > maxLifetime || exp <= iat) return null;
    if (nbf !== undefined && nbf > iat) return null;
    return {
      iss,
      sub,
      iat,
      exp,
      session_id: session_id.toLowerCase(),
      [namespace]: { "x-hasura-user-id": sub },
      [IMPORTED]: "supabase",
    };
  } catch {
    return null;
  }
}
