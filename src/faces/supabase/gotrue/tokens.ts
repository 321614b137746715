import { type JWTPayload, SignJWT } from "jose";
import type { AccessTokenFacts, AccessTokenMinter } from "../../../auth";
import type { Config } from "../../../config";
import { AppError } from "../../../errors";
import type { Deps } from "../../../http/deps";
import {
  actClaims,
  expiryOf,
  HASURA_NAMESPACE,
  rethrowUnreadable,
  verifyOwnJwt,
} from "../../../signing-keys/jwt";
import { getKeySet } from "../../../signing-keys/keys";
import { GoTrueError } from "./errors";
import { AUDIENCE, providerOf } from "./user-facts";

/**
 * GoTrue's access tokens (contract supabase.md §2): its claims at the top level, so a PostgREST, an Edge Function or
 * auth-js's `getClaims` reads them as Supabase's own, and the Hasura namespace beside them, the same as the Nhost
 * face's, so one Hasura accepts both faces' tokens. Signed with the service's keys (JWKS) with RS256 or ES256, the
 * only algorithms `getClaims` verifies: on a key set whose signer is EdDSA the newest RSA key signs (as for ID
 * tokens); a set with none cannot serve this face.
 */

const issuers = new WeakMap<Config, string>();

/** The face's issuer: `{origin}/supabase/auth/v1`, where auth-js was pointed (worked out once per configuration). */
export function goTrueIssuer(config: Config): string {
  let issuer = issuers.get(config);
  if (issuer === undefined) {
    issuer = `${new URL(config.urls.server).origin}/supabase/auth/v1`;
    issuers.set(config, issuer);
  }
  return issuer;
}

/** GoTrue's `amr` method for each way a session begins (sign-in/method.ts). */
export function amrMethod(method: string | null): string {
  if (!method) return "password";
  if (method === "email-password") return "password";
  if (method === "email-link" || method === "pkce-link") return "magiclink";
  if (method === "email-otp" || method === "sms-otp") return "otp";
  if (method === "mfa-totp") return "totp";
  if (method === "mfa-sms") return "mfa/phone";
  if (method === "mfa-webauthn" || method === "mfa-passkey") return "mfa/webauthn";
  if (method === "anonymous") return "anonymous";
  if (method === "id-token" || method.startsWith("provider:")) return "oauth";
  if (method.startsWith("sso:")) return "sso/saml";
  if (method === "webauthn" || method === "webauthn-upgrade") return "passkey";
  return method;
}

/** GoTrue's `aal` of a session begun this way: aal2 once the second factor was shown (TOTP, phone, WebAuthn, email). */
export const aalOf = (method: string | null): "aal1" | "aal2" =>
  method === "mfa-totp" ||
  method === "mfa-sms" ||
  method === "mfa-webauthn" ||
  method === "mfa-passkey" ||
  method === "mfa-email"
    ? "aal2"
    : "aal1";

export const signGoTrueToken: AccessTokenMinter = async (deps: Deps, facts: AccessTokenFacts) => {
  const keys = await getKeySet(deps.config);
  const signer = keys.signer.alg === "EdDSA" ? keys.idTokenSigner : keys.signer;
  if (signer.alg === "EdDSA") {
    throw new AppError(
      "internal-server-error",
      "the Supabase face signs with RS256 or ES256: add such a key (npm run admin -- rotate-keys)",
    );
  }
  const iat = Math.floor(facts.now / 1000);
  const { user } = facts;
  return new SignJWT({
    ...facts.topLevel,
    aud: AUDIENCE,
    role: AUDIENCE,
    email: user.email ?? "",
    phone: user.phoneNumber ?? "",
    // What the service role set, read in the session check's row (hot-queries.ts); `provider(s)` are the service's.
    app_metadata: { ...user.appMetadata, provider: providerOf(user), providers: [providerOf(user)] },
    user_metadata: user.metadata ?? {},
    session_id: facts.sessionId,
    // The Nhost face's session claim too: either face's checks find the session by it.
    sid: facts.sessionId,
    // aal2: the session began with the second factor (the Nhost face's TOTP step, or this face's `mfa.verify`).
    aal: aalOf(facts.method),
    amr: [{ method: amrMethod(facts.method), timestamp: Math.floor(facts.startedAt / 1000) }],
    is_anonymous: user.isAnonymous,
    // A session short of the user's second factor gets no Hasura claims: Hasura (which has no `aal`) refuses its token,
    // as the Nhost face gives none before the second factor (docs/decisions.md, "Issue 43: MFA").
    ...(facts.secondFactorPending ? {} : { [HASURA_NAMESPACE]: facts.claims }),
    ...(facts.dpopJkt ? { cnf: { jkt: facts.dpopJkt } } : {}),
    // An impersonation: who acts (RFC 8693 §4.1 `act`), and `imp` as GoTrue writes a method (operators.md §1).
    ...(facts.impersonation
      ? {
          act: actClaims(facts.impersonation).act,
          amr: [{ method: "imp", timestamp: Math.floor(facts.startedAt / 1000) }],
        }
      : {}),
  })
    .setProtectedHeader({ alg: signer.alg, kid: signer.kid, typ: "JWT" })
    .setSubject(user.id)
    .setIssuer(goTrueIssuer(deps.config))
    .setIssuedAt(iat)
    .setExpirationTime(expiryOf(iat, deps.config.tokens.accessTtl, facts.impersonation))
    .sign(signer.key);
};

export interface GoTrueClaims {
  sub: string;
  session_id: string;
  exp: number;
  /** An impersonation's: who acts (contract operators.md §1). */
  act?: { sub: string };
}

/** A token this face issued, or GoTrue's 403 `bad_jwt`. */
export async function verifyGoTrueToken(config: Config, token: string): Promise<GoTrueClaims> {
  try {
    const payload = await verifyOwnJwt(config, token, {
      typ: "JWT",
      requiredClaims: ["sub", "exp", "iat", "session_id"],
      issuer: goTrueIssuer(config),
      audience: AUDIENCE,
    });
    if (typeof payload.session_id !== "string") throw new Error("no session");
    return payload as unknown as GoTrueClaims;
  } catch (error) {
    rethrowUnreadable(error);
    throw new GoTrueError(
      403,
      "bad_jwt",
      "invalid JWT: unable to parse or verify signature, token is invalid",
    );
  }
}

/** A token this face issued, all its claims, or null: what the service binding accepts of this face. */
export async function verifySupabaseFaceToken(config: Config, token: string): Promise<JWTPayload | null> {
  try {
    return (await verifyGoTrueToken(config, token)) as unknown as JWTPayload;
  } catch (error) {
    if (error instanceof GoTrueError) return null;
    throw error;
  }
}
