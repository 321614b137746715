/**
 * One family of imported hash formats (index.ts dispatches to each). `read` recognises a stored string by its prefix
 * and checks it whole, bounds included (HASH_BOUNDS), the same at import and at sign-in: a row can outlive a bound
 * being lowered, and a sign-in never trusts a row more than the import did. `check` then verifies a password.
 */

export const IMPORTED_HASHERS = [
  "bcrypt",
  "argon2id",
  "argon2i",
  "scrypt",
  "scrypt_firebase",
  "pbkdf2_sha1",
  "pbkdf2_sha256",
  "pbkdf2_sha512",
  "bcrypt_sha256",
  "sha256_salted",
  "md5",
  "phpass",
] as const;

export type ImportedHasher = (typeof IMPORTED_HASHERS)[number];

/** Not this family's prefix (null), this family's but unusable (why), or its scheme and parameters. */
export type Read<P> = null | { refused: string } | { hasher: ImportedHasher; params: P };

export interface HashFamily<P> {
  read(stored: string): Read<P>;
  check(password: string, params: P): Promise<boolean>;
}

/** Families are generic in their parameters; the index holds them side by side. */
// biome-ignore lint/suspicious/noExplicitAny: each family's read and check agree on its own parameter type
export type AnyFamily = HashFamily<any>;

export const family = <P>(f: HashFamily<P>): AnyFamily => f;
