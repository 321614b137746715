/** Small crypto helpers on Web Crypto. Every random value comes from the platform CSPRNG. */

const encoder = new TextEncoder();

/** A UUID-shaped secret (122 random bits): refresh tokens, tickets and ids all use this shape on the wire. */
export function randomUuid(): string {
  return crypto.randomUUID();
}

export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let out = "";
  for (const b of view) out += b.toString(16).padStart(2, "0");
  return out;
}

export function fromHex(hex: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
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

const aesKeys = new Map<string, Promise<CryptoKey>>();

function aesKey(hexKey: string): Promise<CryptoKey> {
  let key = aesKeys.get(hexKey);
  if (!key) {
    key = crypto.subtle.importKey("raw", fromHex(hexKey), "AES-GCM", false, ["encrypt", "decrypt"]);
    aesKeys.set(hexKey, key);
  }
  return key;
}

/** AES-256-GCM with a random 96-bit nonce; output is hex(nonce ‖ ciphertext ‖ tag). */
export async function encrypt(hexKey: string, plaintext: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv },
    await aesKey(hexKey),
    encoder.encode(plaintext),
  );
  return toHex(iv) + toHex(sealed);
}

export async function decrypt(hexKey: string, sealedHex: string): Promise<string> {
  const bytes = fromHex(sealedHex);
  const opened = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: bytes.slice(0, 12) },
    await aesKey(hexKey),
    bytes.slice(12),
  );
  return new TextDecoder().decode(opened);
}
