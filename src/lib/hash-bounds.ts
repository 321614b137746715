/**
 * The costs a stored hash may ask for. Its parameters come from the row, and a row can come from an import: a hash
 * naming m=9,999,999 KiB or bcrypt cost 31 would make one sign-in hold gigabytes or run for hours (a CPU and memory
 * bomb behind a single request). Beyond these, an import refuses the user (its report says why) and a stored hash is
 * refused like a wrong password; the user resets it. The measured CPU of one verification at each bound is in
 * docs/imported-password-hashes.md; why these numbers in docs/decisions.md (issue 44).
 */
export const HASH_BOUNDS = {
  /**
   * argon2id / argon2i: OWASP's largest listed memory (46 MiB) and its largest listed passes (5, at 7 MiB: the
   * service's own cost since issue 48), with memory × passes at most 46 MiB × 4, the bound before issue 48, so the
   * worst case costs no more than it did.
   */
  argon2MaxMemoryKiB: 47_104,
  argon2MaxPasses: 5,
  argon2MaxMemoryPasses: 47_104 * 4,
  argon2MaxLanes: 4,
  /** bcrypt (and Django's bcrypt_sha256): Nhost used 10, OWASP asks ≥ 10. */
  bcryptMaxCost: 12,
  /** PBKDF2, any digest: Django 6.0's default for PBKDF2-SHA256 (1,200,000), OWASP asks 600,000. */
  pbkdf2MaxIterations: 1_200_000,
  /**
   * scrypt (passlib's and Firebase's): 128·N·r·p bytes. 32 MiB: Firebase's usual N=2^14, r=8 (16 MiB) twice
   * over; not 64 MiB, because the isolate's 128 MB also holds argon2id's 65 MB of WASM memory when the rehash
   * follows.
   */
  scryptMaxBytes: 32 * 1024 * 1024,
  /** PHPass: 2^n MD5 rounds; WordPress writes 2^13, phpBB 2^11, passlib 2^19 by default. */
  phpassMaxLog2Rounds: 19,
};
