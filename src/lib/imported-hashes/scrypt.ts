import { scrypt } from "@noble/hashes/scrypt.js";
import { HASH_BOUNDS } from "../hash-bounds";
import { concat, fromBase64, sameBytes, utf8 } from "./bytes";
import { family } from "./family";

/**
 * scrypt (RFC 7914) by @noble/hashes (pure JS; WebCrypto has no scrypt), in two forms:
 * - passlib's PHC string, stored as given: `$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<hash>`, standard base64 without
 *   padding; the hash's length is the derived key's.
 * - Firebase's modified scrypt, imported in Clerk's six fields `hash$salt$signerKey$saltSeparator$rounds$memCost` and
 *   stored behind a tag of ours: `$firebase-scrypt$` + those six fields. The algorithm (Firebase's published
 *   reference, firebase/scrypt, and the firebase-scrypt npm package): key = scrypt(password, salt ‖ saltSeparator,
 *   N = 2^memCost, r = rounds, p = 1, 32 bytes); the hash is the signer key encrypted with AES-256-CTR under that key
 *   and an all-zero counter block. The signer key and separator are the project's, copied into every user's hash.
 */

export const FIREBASE_TAG = "$firebase-scrypt$";

interface ScryptParams {
  N: number;
  r: number;
  p: number;
  salt: Uint8Array;
  hash: Uint8Array;
  /** Firebase's: the hash is this key encrypted under the derived one. */
  signerKey?: Uint8Array;
}

const PASSLIB =
  /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,3}),p=(\d{1,3})\$([A-Za-z0-9+/]{1,128})\$([A-Za-z0-9+/]{16,512})$/;
const FIELD = "([A-Za-z0-9+/_=-]{1,512})";
const FIREBASE = new RegExp(
  `^\\$firebase-scrypt\\$${FIELD}\\$${FIELD}\\$${FIELD}\\$${FIELD}\\$(\\d{1,2})\\$(\\d{1,2})$`,
);

function bounded(
  N: number,
  r: number,
  p: number,
  salt: Uint8Array | null,
  hash: Uint8Array | null,
  label: string,
) {
  if (!salt || !hash || N < 2 || r < 1 || p < 1) return { refused: `malformed ${label} hash` };
  const bytes = 128 * N * r * p;
  if (bytes > HASH_BOUNDS.scryptMaxBytes)
    return {
      refused: `scrypt cost N=${N},r=${r},p=${p} needs ${bytes / 1048576} MiB, above ${HASH_BOUNDS.scryptMaxBytes / 1048576} MiB`,
    };
  return null;
}

export const scryptFamily = family<ScryptParams>({
  read(stored) {
    if (stored.startsWith("$scrypt$")) {
      const match = PASSLIB.exec(stored);
      if (!match) return { refused: "malformed scrypt hash (passlib's $scrypt$ln=…,r=…,p=…$salt$hash)" };
      const [ln, r, p] = [match[1], match[2], match[3]].map(Number) as [number, number, number];
      const [salt, hash] = [fromBase64(match[4]!), fromBase64(match[5]!)];
      const refused =
        ln > 30 ? { refused: "malformed scrypt hash" } : bounded(2 ** ln, r, p, salt, hash, "scrypt");
      return refused ?? { hasher: "scrypt", params: { N: 2 ** ln, r, p, salt: salt!, hash: hash! } };
    }
    if (!stored.startsWith(FIREBASE_TAG)) return null;
    const match = FIREBASE.exec(stored);
    const layout =
      "malformed Firebase scrypt hash (hash$salt$signerKey$saltSeparator$rounds$memCost, base64)";
    if (!match) return { refused: layout };
    const [hash, salt, signerKey, separator] = [1, 2, 3, 4].map((i) => fromBase64(match[i]!)) as [
      Uint8Array | null,
      Uint8Array | null,
      Uint8Array | null,
      Uint8Array | null,
    ];
    const [rounds, memCost] = [Number(match[5]), Number(match[6])];
    if (!signerKey || !separator || memCost > 30) return { refused: layout };
    const refused = bounded(2 ** memCost, rounds, 1, salt, hash, "Firebase scrypt");
    if (refused) return refused;
    return {
      hasher: "scrypt_firebase",
      params: { N: 2 ** memCost, r: rounds, p: 1, salt: concat(salt!, separator), hash: hash!, signerKey },
    };
  },
  async check(password, { N, r, p, salt, hash, signerKey }) {
    const dkLen = signerKey ? 32 : hash.byteLength;
    // maxmem: our own bound, so the library's (1 GiB) is never the one that holds.
    const key = scrypt(utf8(password), salt, {
      N,
      r,
      p,
      dkLen,
      maxmem: HASH_BOUNDS.scryptMaxBytes + 4096 * r * p,
    });
    if (!signerKey) return sameBytes(key, hash);
    const aes = await crypto.subtle.importKey("raw", key, "AES-CTR", false, ["encrypt"]);
    const counter = new Uint8Array(16);
    const encrypted = new Uint8Array(
      await crypto.subtle.encrypt({ name: "AES-CTR", counter, length: 128 }, aes, signerKey),
    );
    return sameBytes(encrypted, hash);
  },
});
