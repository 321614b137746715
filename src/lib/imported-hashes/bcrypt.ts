import bcrypt from "bcryptjs";
import { HASH_BOUNDS } from "../hash-bounds";
import { toHex, utf8 } from "./bytes";
import { family } from "./family";

/**
 * bcrypt (`$2a$`/`$2b$`/`$2y$`: one algorithm under three names) and Django's `bcrypt_sha256$` + bcrypt of the hex
 * SHA-256 of the password (Django's BCryptSHA256PasswordHasher, which lifts bcrypt's 72-byte limit). Plain bcrypt
 * is verified by src/lib/password.ts, as it was for Nhost; this family checks both at import and Django's at sign-in.
 */

const BCRYPT = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/;
const DJANGO = "bcrypt_sha256$";

export const bcryptFamily = family<{ django: boolean; inner: string }>({
  read(stored) {
    const django = stored.startsWith(DJANGO);
    const inner = django ? stored.slice(DJANGO.length) : stored;
    if (!django && !/^\$2[aby]?\$/.test(stored)) return null;
    const cost = BCRYPT.exec(inner)?.[1];
    if (cost === undefined || Number(cost) < 4) return { refused: "malformed bcrypt hash" };
    if (Number(cost) > HASH_BOUNDS.bcryptMaxCost)
      return { refused: `bcrypt cost ${cost} is above ${HASH_BOUNDS.bcryptMaxCost}` };
    return { hasher: django ? "bcrypt_sha256" : "bcrypt", params: { django, inner } };
  },
  async check(password, { django, inner }) {
    // bcryptjs compares in constant time.
    const given = django
      ? toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", utf8(password))))
      : password;
    return bcrypt.compare(given, inner);
  },
});
