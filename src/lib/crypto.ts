import { fromHex, toHex } from "./hex";
import { settledMemo } from "./settled";
import { aesSubkey } from "./subkeys";

/** Small crypto helpers on Web Crypto. Every random value comes from the platform CSPRNG. */

const encoder = new TextEncoder();

/** A UUID-shaped secret (122 random bits): refresh tokens, tickets and ids all use this shape on the wire. */
export function randomUuid(): string {
  return crypto.randomUUID();
}

/** SHA-256 is enough for high-entropy tokens (no dictionary to attack); passwords use `password.ts`. */
export async function sha256Hex(value: string): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", encoder.encode(value)));
}

/** Constant-time string comparison (length leaks, content does not). */
export function timingSafeEqualString(a: string, b: string): boolean {
  const left = encoder.encode(a);
  const right = encoder.encode(b);
  if (left.byteLength !== right.byteLength) {
    // Compare against itself so the time spent does not depend on where the inputs differ.
    crypto.subtle.timingSafeEqual(left, left);
    return false;
  }
  return crypto.subtle.timingSafeEqual(left, right);
}

const legacyAesKeys = settledMemo<string, CryptoKey>();

/** The master key itself as the AES key: how values were sealed before subkeys (see `decrypt`). */
function legacyAesKey(hexKey: string): Promise<CryptoKey> {
  return legacyAesKeys.get(hexKey, () =>
    crypto.subtle.importKey("raw", fromHex(hexKey), "AES-GCM", false, ["decrypt"]),
  );
}

/** Marks values sealed under the HKDF subkey (subkeys.ts); hex never contains a dot. */
const SUBKEY_PREFIX = "v2.";

/** AES-256-GCM under the AES subkey of `hexKey`, random 96-bit nonce; `v2.` + hex(nonce ‖ ciphertext ‖ tag). */
export async function encrypt(hexKey: string, plaintext: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv },
    await aesSubkey(hexKey),
    encoder.encode(plaintext),
  );
  return SUBKEY_PREFIX + toHex(iv) + toHex(sealed);
}

/**
 * Opens a value from `encrypt`. Values without the prefix were sealed under the master key itself, before subkeys
 * existed (TOTP secrets set up before this release): they still open, and are re-sealed when next written. The
 * legacy branch can go once no `users.totp_secret` lacks the prefix.
 */
export async function decrypt(hexKey: string, sealed: string): Promise<string> {
  const subkey = sealed.startsWith(SUBKEY_PREFIX);
  const bytes = fromHex(subkey ? sealed.slice(SUBKEY_PREFIX.length) : sealed);
  const opened = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: bytes.slice(0, 12) },
    await (subkey ? aesSubkey(hexKey) : legacyAesKey(hexKey)),
    bytes.slice(12),
  );
  return new TextDecoder().decode(opened);
}
