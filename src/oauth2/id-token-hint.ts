import { type JWTPayload, jwtVerify } from "jose";
import type { Config } from "../config";
import { SIGNING_ALGORITHMS } from "../lib/key-algorithms";
import { ownVerifyKey, rethrowUnreadable } from "../signing-keys/jwt";

/**
 * The `id_token_hint` of an authorization request (OIDC Core §3.1.2.1) and of RP-Initiated Logout 1.0 §2: an ID
 * token this server signed for a client, which says who asks (its `aud`), for whom (`sub`) and for which browser
 * session (`sid`, src/oauth2/tokens.ts `signIdToken`).
 */
export interface IdTokenHint {
  /** The client it was issued to: the ID token's `aud` (ours are one client id). */
  clientId: string;
  sub: string;
  /** The browser session at this service it came from; absent on ID tokens from grants that have none. */
  sid?: string;
}

/** A hint longer than this is no ID token of ours (they are a few hundred bytes to a few kilobytes). */
const MAX_HINT_LENGTH = 8192;

/**
 * Verifies a hint with our own keys: the key its `kid` names and that key's algorithm only (so `alg: none` and a
 * token re-signed with another algorithm fail, RFC 8725 §3.1), our issuer, `typ: JWT`, an audience and a subject.
 * Its expiry is not checked: §2 lets the OP accept an expired ID token as a hint, and RPs log out long after their
 * ID token ran out. A session access token (also `typ: JWT`, signed by the same keys) has no `aud`, so it is no hint;
 * an OAuth2 access token is `at+jwt`. Null for anything that does not verify.
 */
export async function verifyIdTokenHint(config: Config, token: string): Promise<IdTokenHint | null> {
  if (token.length > MAX_HINT_LENGTH) return null;
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(
      token,
      async (header) => {
        const found = header.kid ? await ownVerifyKey(config, header.kid) : undefined;
        if (!found || found.alg !== header.alg) throw new Error("not one of our keys");
        return found.key;
      },
      {
        algorithms: [...SIGNING_ALGORITHMS],
        issuer: config.urls.server,
        typ: "JWT",
        requiredClaims: ["sub", "aud", "iat"],
        // Expiry ignored (see above): any clock skew is tolerated (jose wants a finite number).
        clockTolerance: Number.MAX_SAFE_INTEGER,
      },
    ));
  } catch (error) {
    // D1 unable to give the key set is no verdict on the hint: the request's 503, not "not our ID token".
    rethrowUnreadable(error);
    return null;
  }
  const audience = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  // Our ID tokens name exactly one client; a token for several parties is not one of them.
  if (audience.length !== 1 || typeof audience[0] !== "string" || typeof payload.sub !== "string")
    return null;
  return {
    clientId: audience[0],
    sub: payload.sub,
    ...(typeof payload.sid === "string" ? { sid: payload.sid } : {}),
  };
}
