import { argon2Family } from "./argon2";
import { bcryptFamily } from "./bcrypt";
import { digestFamily, MD5_TAG } from "./digests";
import type { AnyFamily, ImportedHasher } from "./family";
import { pbkdf2Family } from "./pbkdf2";
import { FIREBASE_TAG, scryptFamily } from "./scrypt";

/**
 * Password hashes imported from other systems (contract supabase.md §5, `import-users`): checked at import in the
 * layout the import's `passwordHasher` names, stored in `users.password_hash` in a form that names its scheme by
 * itself, verified at the user's first sign-in by src/lib/password.ts and then replaced by the service's argon2id.
 * Stored forms (docs/imported-password-hashes.md): every format as given, but MD5 hex behind `$md5-hex$` and
 * Firebase's six fields behind `$firebase-scrypt$`, the two that say nothing of their scheme alone.
 */

export { IMPORTED_HASHERS, type ImportedHasher } from "./family";

const FAMILIES: AnyFamily[] = [bcryptFamily, argon2Family, scryptFamily, pbkdf2Family, digestFamily];

/** What each hasher's hashes look like, for the report's line. */
const LAYOUTS: Record<ImportedHasher, string> = {
  bcrypt: "$2a$/$2b$/$2y$",
  argon2id: "$argon2id$v=19$m=…,t=…,p=…$salt$hash",
  argon2i: "$argon2i$v=19$m=…,t=…,p=…$salt$hash",
  scrypt: "$scrypt$ln=…,r=…,p=…$salt$hash",
  scrypt_firebase: "hash$salt$signerKey$saltSeparator$rounds$memCost",
  pbkdf2_sha1: "pbkdf2_sha1$<iterations>$<salt>$<hash> or $pbkdf2$…",
  pbkdf2_sha256: "pbkdf2_sha256$<iterations>$<salt>$<hash> or $pbkdf2-sha256$…",
  pbkdf2_sha512: "pbkdf2_sha512$<iterations>$<salt>$<hash> or $pbkdf2-sha512$…",
  bcrypt_sha256: "bcrypt_sha256$$2b$…",
  sha256_salted: "sha256$<salt>$<hex>",
  md5: "32 hex digits",
  phpass: "$P$ or $H$",
};

/** The import's layout into the stored form: the same string but for the two that need a tag to say their scheme. */
function toStored(hasher: ImportedHasher, hash: string): string {
  if (hasher === "md5") return `${MD5_TAG}${hash.toLowerCase()}`;
  if (hasher === "scrypt_firebase") return `${FIREBASE_TAG}${hash}`;
  return hash;
}

function read(stored: string) {
  for (const family of FAMILIES) {
    const result = family.read(stored);
    if (result !== null) return { family, result };
  }
  return null;
}

/** argon2id and bcrypt, well formed or not, are verified (or refused) by src/lib/password.ts as before the imports. */
const PASSWORD_TS_OWN = /^\$(?:argon2id|2[aby]?)\$/;

export type ParsedHash = { stored: string; warning?: string } | { refused: string };

/** An import's hash in the layout `hasher` names: its stored form, or why it is refused (the report's line). */
export function parseImportedHash(hasher: ImportedHasher, hash: string): ParsedHash {
  const found = read(toStored(hasher, hash));
  if (found === null) return { refused: `not a ${hasher} hash (${LAYOUTS[hasher]})` };
  if ("refused" in found.result) return { refused: found.result.refused };
  if (found.result.hasher !== hasher)
    return { refused: `${hasher} is ${LAYOUTS[hasher]}; this hash is ${found.result.hasher}` };
  const stored = toStored(hasher, hash);
  if (hasher === "md5")
    return {
      stored,
      warning: "MD5 password hash (unsalted, fast): replaced by argon2id at the first sign-in",
    };
  return { stored };
}

/**
 * Verifies `password` against a stored imported hash; undefined when `stored` is not one of the formats this module
 * verifies (bcrypt and argon2id are src/lib/password.ts's own). A stored hash that no longer parses or is above the
 * bounds answers false, like a wrong password; so does one the library refuses (never a 500 on a sign-in).
 */
export function verifyImportedHash(password: string, stored: string): Promise<boolean> | undefined {
  if (PASSWORD_TS_OWN.test(stored)) return undefined;
  const found = read(stored);
  if (found === null) return undefined;
  const { family, result } = found;
  if ("refused" in result) return Promise.resolve(false);
  return family.check(password, result.params).catch(() => false);
}
