import { generateRandomString, type RandomReader } from "@oslojs/crypto/random";
import { fromHex, toHex } from "./crypto";

const random: RandomReader = { read: (bytes) => crypto.getRandomValues(bytes) };

/** A uniformly random 6-digit code (no modulo bias). */
export function generateCode(): string {
  return generateRandomString(random, "0123456789", 6);
}

const keys = new Map<string, Promise<CryptoKey>>();

/**
 * Codes are stored as HMAC-SHA256 under `AUTH_ENCRYPTION_KEY`, bound to their purpose and identifier: a plain hash
 * of a 6-digit code would be reversed by trying all million codes.
 */
export async function codeHash(hexKey: string, scope: string, code: string): Promise<string> {
  let key = keys.get(hexKey);
  if (!key) {
    key = crypto.subtle.importKey("raw", fromHex(hexKey), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    keys.set(hexKey, key);
  }
  return toHex(await crypto.subtle.sign("HMAC", await key, new TextEncoder().encode(`${scope}\n${code}`)));
}
