/**
 * The encodings the imported formats use, decoded strictly (a character outside the alphabet is a malformed hash,
 * not something to skip as Node's lenient decoder does), and the constant-time comparison of digests.
 */

const encoder = new TextEncoder();
export const utf8 = (text: string) => encoder.encode(text);

const STANDARD = /^[A-Za-z0-9+/]*={0,2}$/;
const URL_SAFE = /^[A-Za-z0-9_-]*={0,2}$/;

/** Base64, standard or URL-safe (Firebase's Admin SDK writes the latter), padded or not; null when malformed. */
export function fromBase64(text: string): Uint8Array | null {
  if (!STANDARD.test(text) && !URL_SAFE.test(text)) return null;
  const bare = text.replace(/=+$/, "").replace(/-/g, "+").replace(/_/g, "/");
  if (bare.length % 4 === 1) return null;
  const binary = atob(bare.padEnd(Math.ceil(bare.length / 4) * 4, "="));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** passlib's "adapted base64": `.` for `+`, no padding. */
export const fromAb64 = (text: string) =>
  /^[A-Za-z0-9./]*$/.test(text) ? fromBase64(text.replace(/\./g, "+")) : null;

export function fromHex(text: string): Uint8Array | null {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(text)) return null;
  return Uint8Array.from(text.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));
}

export const toHex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

/** Constant time for equal lengths; a length mismatch compares `expected` with itself, so it costs the same. */
export function sameBytes(actual: Uint8Array, expected: Uint8Array): boolean {
  if (actual.byteLength !== expected.byteLength) {
    crypto.subtle.timingSafeEqual(expected, expected);
    return false;
  }
  return crypto.subtle.timingSafeEqual(actual, expected);
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}
