import { SignJWT } from "jose";
import type { Config } from "../../config";
import { randomUuid } from "../../lib/crypto";
import { getKeySet } from "../../signing-keys/keys";

/**
 * Back-Channel Logout 1.0 §2.4: the logout token, signed like our ID tokens (the ID-token key, RS256: what an RP
 * already verifies), with the explicit type `logout+jwt` (§2.4, RFC 8725 §3.11) so that no verifier takes it for an
 * ID token or an access token, and never a `nonce` (§2.4: a logout token with one "MUST" be refused, which keeps it
 * from being replayed as an ID token).
 */
export const LOGOUT_TOKEN_TYPE = "logout+jwt";
export const BACKCHANNEL_LOGOUT_EVENT = "http://schemas.openid.net/event/backchannel-logout";

/**
 * Two minutes: a token is signed afresh for every attempt (the delivery's retries can span days), so it only has to
 * outlive one post; the RP's replay check (`jti`) then needs to remember it that long (§2.6).
 */
export const LOGOUT_TOKEN_LIFETIME_S = 120;

export interface LogoutNotice {
  clientId: string;
  /** The user (`sub` of their ID tokens). */
  userId: string;
  /** The ended session (`sid` of their ID tokens). */
  sid: string;
}

export async function signLogoutToken(config: Config, notice: LogoutNotice, now: number): Promise<string> {
  const { idTokenSigner: signer } = await getKeySet(config);
  const iat = Math.floor(now / 1000);
  return new SignJWT({ sid: notice.sid, events: { [BACKCHANNEL_LOGOUT_EVENT]: {} } })
    .setProtectedHeader({ alg: signer.alg, kid: signer.kid, typ: LOGOUT_TOKEN_TYPE })
    .setIssuer(config.urls.server)
    .setSubject(notice.userId)
    .setAudience(notice.clientId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + LOGOUT_TOKEN_LIFETIME_S)
    .setJti(randomUuid())
    .sign(signer.key);
}
