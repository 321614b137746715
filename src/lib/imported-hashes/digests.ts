import { md5 } from "@noble/hashes/legacy.js";
import { HASH_BOUNDS } from "../hash-bounds";
import { concat, fromHex, sameBytes, utf8 } from "./bytes";
import { family } from "./family";

/**
 * The fast digests: no cost to bound, and none to protect a leaked hash either, hence replaced at the first sign-in.
 * - `sha256$<salt>$<hex SHA-256(salt ‖ password)>`, the salt as text, stored as given;
 * - MD5 hex of the password, stored behind a tag of ours (`$md5-hex$<lower-case hex>`), since 32 hex digits alone say
 *   nothing of their scheme; flagged in the import's report;
 * - PHPass (WordPress's `$P$`, phpBB's `$H$`), stored as given: `$P$` + the log2 of the rounds as one character of
 *   its alphabet + 8 salt characters + 22 of hash; hash = MD5(salt ‖ password), then 2^n times
 *   MD5(hash ‖ password), written in PHPass's own little-endian base64 (phpass 0.3, Openwall).
 * MD5 is @noble/hashes' (WebCrypto has none in Node, where the bench runs; PHPass loops thousands of times in JS).
 */

export const MD5_TAG = "$md5-hex$";
const ITOA64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SALTED = /^sha256\$([^$]{1,256})\$([0-9a-fA-F]{64})$/;
const MD5_HEX = /^\$md5-hex\$([0-9a-f]{32})$/;
const PHPASS = /^\$[PH]\$([./0-9A-Za-z])([./0-9A-Za-z]{8})([./0-9A-Za-z]{22})$/;

type DigestParams =
  | { kind: "sha256"; salt: string; hash: Uint8Array }
  | { kind: "md5"; hash: Uint8Array }
  | { kind: "phpass"; log2: number; salt: string; encoded: string };

export const digestFamily = family<DigestParams>({
  read(stored) {
    if (stored.startsWith("sha256$")) {
      const match = SALTED.exec(stored);
      if (!match) return { refused: "malformed salted SHA-256 hash (sha256$<salt>$<hex>)" };
      return {
        hasher: "sha256_salted",
        params: { kind: "sha256", salt: match[1]!, hash: fromHex(match[2]!)! },
      };
    }
    if (stored.startsWith(MD5_TAG)) {
      const match = MD5_HEX.exec(stored);
      if (!match) return { refused: "malformed MD5 hash (32 hex digits)" };
      return { hasher: "md5", params: { kind: "md5", hash: fromHex(match[1]!)! } };
    }
    if (!stored.startsWith("$P$") && !stored.startsWith("$H$")) return null;
    const match = PHPASS.exec(stored);
    const log2 = match ? ITOA64.indexOf(match[1]!) : -1;
    if (!match || log2 < 7 || log2 > 30)
      return { refused: "malformed PHPass hash ($P$ or $H$, 34 characters)" };
    if (log2 > HASH_BOUNDS.phpassMaxLog2Rounds)
      return { refused: `PHPass rounds 2^${log2} are above 2^${HASH_BOUNDS.phpassMaxLog2Rounds}` };
    return { hasher: "phpass", params: { kind: "phpass", log2, salt: match[2]!, encoded: match[3]! } };
  },
  async check(password, params) {
    const secret = utf8(password);
    if (params.kind === "sha256") {
      const digest = await crypto.subtle.digest("SHA-256", concat(utf8(params.salt), secret));
      return sameBytes(new Uint8Array(digest), params.hash);
    }
    if (params.kind === "md5") return sameBytes(md5(secret), params.hash);
    let hash = md5(concat(utf8(params.salt), secret));
    for (let round = 2 ** params.log2; round > 0; round--) hash = md5(concat(hash, secret));
    return sameBytes(utf8(phpassBase64(hash)), utf8(params.encoded));
  },
});

/** PHPass's encode64: 3 bytes at a time, least significant first, into 4 characters of ITOA64 (16 bytes → 22). */
function phpassBase64(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; ) {
    let value = bytes[i++]!;
    out += ITOA64[value & 0x3f];
    if (i < bytes.length) value |= bytes[i]! << 8;
    out += ITOA64[(value >> 6) & 0x3f];
    if (i++ >= bytes.length) break;
    if (i < bytes.length) value |= bytes[i]! << 16;
    out += ITOA64[(value >> 12) & 0x3f];
    if (i++ >= bytes.length) break;
    out += ITOA64[(value >> 18) & 0x3f];
  }
  return out;
}
