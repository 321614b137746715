import type { UserRow } from "../db/schema";

/**
 * The claims each scope releases (contract §3.5, OIDC Core §5.4), for the ID token and userinfo. Empty values are
 * left out rather than sent as "".
 */
export function scopeClaims(user: UserRow, scopes: readonly string[]): Record<string, string | boolean> {
  const claims: Record<string, string | boolean> = {};
  if (scopes.includes("profile")) {
    if (user.displayName) claims.name = user.displayName;
    if (user.avatarUrl) claims.picture = user.avatarUrl;
    claims.locale = user.locale;
  }
  if (scopes.includes("email") && user.email) {
    claims.email = user.email;
    claims.email_verified = user.emailVerified;
  }
  if (scopes.includes("phone") && user.phoneNumber) {
    claims.phone_number = user.phoneNumber;
    claims.phone_number_verified = user.phoneNumberVerified;
  }
  return claims;
}

/** Every claim `scopeClaims` can release (discovery's `claims_supported`), plus the ID token's own. */
export const CLAIMS_SUPPORTED = [
  "sub",
  "iss",
  "aud",
  "exp",
  "iat",
  "auth_time",
  // Contract §12: how the user signed in (acr.ts), and the browser session at this service (logout's `sid`).
  "acr",
  "amr",
  "sid",
  "nonce",
  "at_hash",
  "name",
  "picture",
  "locale",
  "email",
  "email_verified",
  "phone_number",
  "phone_number_verified",
];
