import { generateRandomString, type RandomReader } from "@oslojs/crypto/random";
import { fromHex, toHex } from "./hex";
import { settledMemo } from "./settled";
import { type HmacPurpose, hmacSubkey } from "./subkeys";

const random: RandomReader = { read: (bytes) => crypto.getRandomValues(bytes) };

/** A uniformly random 6-digit code (no modulo bias). */
export function generateCode(): string {
  return generateRandomString(random, "0123456789", 6);
}

/**
 * Codes are stored as HMAC-SHA256 under a subkey of `AUTH_ENCRYPTION_KEY` (subkeys.ts), bound to their purpose and
 * identifier: a plain hash of a 6-digit code would be reversed by trying all million codes.
 */
export async function codeHash(
  hexKey: string,
  purpose: HmacPurpose,
  scope: string,
  code: string,
): Promise<string> {
  const key = await hmacSubkey(hexKey, purpose);
  return toHex(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${scope}\n${code}`)));
}

const legacyKeys = settledMemo<string, CryptoKey>();

/**
 * The same under the master key itself, as recovery codes were stored before subkeys: they are still accepted
 * (second-factor.ts). This can go once every `mfa_recovery_codes` row was written by this release or later.
 */
export async function legacyCodeHash(hexKey: string, scope: string, code: string): Promise<string> {
  const key = await legacyKeys.get(hexKey, () =>
    crypto.subtle.importKey("raw", fromHex(hexKey), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]),
  );
  return toHex(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${scope}\n${code}`)));
}
