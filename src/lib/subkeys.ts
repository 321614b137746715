import { fromHex } from "./hex";
import { settledMemo } from "./settled";

/**
 * Keys derived from `AUTH_ENCRYPTION_KEY` with HKDF-SHA256 (RFC 5869), one per purpose, so that one key is never
 * used by two algorithms (AES-GCM and HMAC) or for two purposes: NIST SP 800-108 / SP 800-57 §5.2, "a key shall be
 * used for only one purpose". The purpose is HKDF's `info`.
 */
export type HmacPurpose =
  | "one-time-codes"
  | "recovery-codes"
  | "webauthn-decoys"
  | "oauth2-browser-session"
  | "admin-console"
  | "own-redirects"
  | "audit-emails"
  | "device-user-codes"
  | "ciba-hints"
  | "dpop-nonces"
  | "user-devices"
  | "sign-in-lockout"
  | "gotrue-oauth-hop";

const derived = settledMemo<string, CryptoKey>();

function derive(
  masterHex: string,
  info: string,
  algorithm: { name: "HMAC"; hash: string; length: number } | { name: "AES-GCM"; length: number },
  usages: ("sign" | "encrypt" | "decrypt")[],
): Promise<CryptoKey> {
  return derived.get(`${info}\n${masterHex}`, async () => {
    const master = await crypto.subtle.importKey("raw", fromHex(masterHex), "HKDF", false, ["deriveKey"]);
    return crypto.subtle.deriveKey(
      { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: new TextEncoder().encode(info) },
      master,
      algorithm,
      false,
      usages,
    );
  });
}

export function hmacSubkey(masterHex: string, purpose: HmacPurpose): Promise<CryptoKey> {
  return derive(masterHex, `edge-auth hmac ${purpose}`, { name: "HMAC", hash: "SHA-256", length: 256 }, [
    "sign",
  ]);
}

export function aesSubkey(masterHex: string): Promise<CryptoKey> {
  return derive(masterHex, "edge-auth aes-256-gcm values at rest", { name: "AES-GCM", length: 256 }, [
    "encrypt",
    "decrypt",
  ]);
}
