import { argon2i } from "@noble/hashes/argon2.js";
import { HASH_BOUNDS } from "../hash-bounds";
import { fromBase64, sameBytes, utf8 } from "./bytes";
import { family } from "./family";

/**
 * argon2id and argon2i in the PHC string form (`$argon2id$v=19$m=…,t=…,p=…$<salt>$<tag>`, standard base64 without
 * padding), as argon2-cffi, libsodium and node-argon2 write them. argon2id is stored as given and verified by
 * src/lib/password.ts's WASM argon2id (the service's own hash); argon2i here, by @noble/hashes (pure JS: only imports
 * use it, once per user). Version 19 (1.3) only; 16 (1.0) is refused at import.
 */

const PHC =
  /^\$(argon2id|argon2i)\$v=19\$m=(\d{1,7}),t=(\d{1,3}),p=(\d{1,2})\$([A-Za-z0-9+/]{11,64})\$([A-Za-z0-9+/]{22,128})$/;

interface Argon2Params {
  m: number;
  t: number;
  p: number;
  salt: Uint8Array;
  tag: Uint8Array;
}

export const argon2Family = family<Argon2Params>({
  read(stored) {
    if (!/^\$argon2(id|i)\$/.test(stored)) return null;
    const match = PHC.exec(stored);
    const salt = match && fromBase64(match[5]!);
    const tag = match && fromBase64(match[6]!);
    if (!match || !salt || !tag) return { refused: "malformed argon2 hash (PHC, v=19)" };
    const [m, t, p] = [match[2], match[3], match[4]].map(Number) as [number, number, number];
    if (t < 1 || p < 1 || m < 8 * p) return { refused: "malformed argon2 hash (PHC, v=19)" };
    if (
      m > HASH_BOUNDS.argon2MaxMemoryKiB ||
      t > HASH_BOUNDS.argon2MaxPasses ||
      m * t > HASH_BOUNDS.argon2MaxMemoryPasses ||
      p > HASH_BOUNDS.argon2MaxLanes
    )
      return {
        refused: `argon2 cost m=${m},t=${t},p=${p} is above m=${HASH_BOUNDS.argon2MaxMemoryKiB},t=${HASH_BOUNDS.argon2MaxPasses},p=${HASH_BOUNDS.argon2MaxLanes} (m×t ≤ ${HASH_BOUNDS.argon2MaxMemoryPasses})`,
      };
    return { hasher: match[1] as "argon2id" | "argon2i", params: { m, t, p, salt, tag } };
  },
  async check(password, { m, t, p, salt, tag }) {
    const actual = argon2i(utf8(password), salt, { m, t, p, dkLen: tag.byteLength });
    return sameBytes(actual, tag);
  },
});
