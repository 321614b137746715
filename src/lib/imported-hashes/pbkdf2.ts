import { sha1 } from "@noble/hashes/legacy.js";
import { pbkdf2 } from "@noble/hashes/pbkdf2.js";
import { sha256, sha512 } from "@noble/hashes/sha2.js";
import { HASH_BOUNDS } from "../hash-bounds";
import { fromAb64, fromBase64, sameBytes, utf8 } from "./bytes";
import { family } from "./family";

/**
 * PBKDF2 (RFC 8018) with HMAC-SHA-1, -256 or -512, in two forms, both stored as given:
 * - Django's `pbkdf2_sha256$<iterations>$<salt>$<hash>`: the salt is text (its UTF-8 bytes are the salt), the hash
 *   standard base64 (`pbkdf2_sha1$`, and `pbkdf2_sha512$` in the same layout);
 * - passlib's PHC `$pbkdf2-sha256$<iterations>$<salt>$<hash>` (`$pbkdf2$` is SHA-1, `$pbkdf2-sha512$`), salt and hash
 *   in passlib's adapted base64.
 * WebCrypto derives it natively. The Workers runtime refuses iteration counts above a ceiling that depends on the
 * account's CPU limit (100,000 at the smallest: workerd's `checkKdfIterations`; local workerd has none), with a
 * NotSupportedError before doing any work: then @noble/hashes derives it in JS, ~10× the CPU (measured in
 * docs/imported-password-hashes.md). The derived key is at most one block (the digest's length): a longer one would
 * multiply the work by its blocks.
 */

const DIGESTS = {
  sha1: { webcrypto: "SHA-1", noble: sha1, bytes: 20 },
  sha256: { webcrypto: "SHA-256", noble: sha256, bytes: 32 },
  sha512: { webcrypto: "SHA-512", noble: sha512, bytes: 64 },
} as const;
type Digest = keyof typeof DIGESTS;

const DJANGO = /^pbkdf2_(sha1|sha256|sha512)\$(\d{1,9})\$([^$]{1,256})\$([A-Za-z0-9+/]+={0,2})$/;
const PASSLIB = /^\$pbkdf2(?:-(sha256|sha512))?\$(\d{1,9})\$([A-Za-z0-9./]{0,256})\$([A-Za-z0-9./]+)$/;

interface Pbkdf2Params {
  digest: Digest;
  iterations: number;
  salt: Uint8Array;
  hash: Uint8Array;
}

export const pbkdf2Family = family<Pbkdf2Params>({
  read(stored) {
    const django = stored.startsWith("pbkdf2_");
    if (!django && !stored.startsWith("$pbkdf2$") && !stored.startsWith("$pbkdf2-")) return null;
    const match = (django ? DJANGO : PASSLIB).exec(stored);
    const layout = django
      ? "<name>$<iterations>$<salt>$<base64 hash>"
      : "$pbkdf2-<digest>$<iterations>$<salt>$<hash>";
    if (!match) return { refused: `malformed PBKDF2 hash (${layout})` };
    const digest = (match[1] ?? "sha1") as Digest;
    const iterations = Number(match[2]);
    const salt = django ? utf8(match[3]!) : fromAb64(match[3]!);
    const hash = django ? fromBase64(match[4]!) : fromAb64(match[4]!);
    if (!salt || !hash || iterations < 1 || hash.byteLength < 16 || hash.byteLength > DIGESTS[digest].bytes)
      return { refused: `malformed PBKDF2 hash (${layout})` };
    if (iterations > HASH_BOUNDS.pbkdf2MaxIterations)
      return { refused: `PBKDF2 iterations ${iterations} are above ${HASH_BOUNDS.pbkdf2MaxIterations}` };
    return { hasher: `pbkdf2_${digest}`, params: { digest, iterations, salt, hash } };
  },
  async check(password, { digest, iterations, salt, hash }) {
    const { webcrypto, noble } = DIGESTS[digest];
    const secret = utf8(password);
    const key = await crypto.subtle.importKey("raw", secret, "PBKDF2", false, ["deriveBits"]);
    try {
      const bits = await crypto.subtle.deriveBits(
        { name: "PBKDF2", hash: webcrypto, salt, iterations },
        key,
        hash.byteLength * 8,
      );
      return sameBytes(new Uint8Array(bits), hash);
    } catch (error) {
      if (!(error instanceof DOMException && error.name === "NotSupportedError")) throw error;
      return sameBytes(pbkdf2(noble, secret, salt, { c: iterations, dkLen: hash.byteLength }), hash);
    }
  },
});
