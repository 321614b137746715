import bcrypt from "bcryptjs";
import { argon2id } from "./argon2";
import { HASH_BOUNDS } from "./hash-bounds";
import { verifyImportedHash } from "./imported-hashes";

export { HASH_BOUNDS };

/**
 * Password hashing. argon2id at m=7 MiB, t=5, p=1: the last of the settings OWASP's Password Storage Cheat Sheet
 * lists as equal to its minimum (m=19 MiB, t=2, the service's until issue 48), and the cheapest of them in workerd
 * (0.64–0.78× the CPU of m=19 MiB, t=2; workerd's native scrypt at OWASP's equal settings 2.3–6.5×: bench/hashers.mjs,
 * docs/decisions.md "Issue 48: password hashing"). Hashes are stored in the PHC string format, which names the
 * algorithm and its parameters, so they can be changed later: `verifyPassword` reports `needsRehash` for any hash
 * that is not at the current parameters (m=19 MiB, t=2 ones and bcrypt hashes imported from Nhost included), and the
 * sign-in replaces it (src/auth/accounts/password-session.ts).
 */

export interface Argon2Cost {
  readonly memorySize: number;
  readonly passes: number;
  readonly parallelism: number;
  readonly tagLength: number;
}

export const ARGON2_PARAMS: Argon2Cost = { memorySize: 7_168, passes: 5, parallelism: 1, tagLength: 32 };

/** The cost of every hash made before issue 48 (OWASP's first argon2id row): still verified, replaced at sign-in. */
export const ARGON2_PARAMS_BEFORE_48: Argon2Cost = {
  memorySize: 19_456,
  passes: 2,
  parallelism: 1,
  tagLength: 32,
};

/**
 * The test suite's cost (`TEST_PASSWORD_HASH=cheap`, set by vitest.config.ts and test/compat/wrangler-dev.ts): the
 * smallest argon2id allows (8 KiB, one pass), so the thousands of sign-ups and sign-ins of the suite do not each
 * spend 7 MiB and five passes. The config refuses it unless the server is local (src/config.ts), so a deployment
 * never hashes at it; test/lib/password.test.ts asserts ARGON2_PARAMS, the production cost, once.
 */
export const TEST_ARGON2_PARAMS: Argon2Cost = { memorySize: 8, passes: 1, parallelism: 1, tagLength: 32 };

const prefixOf = (cost: Argon2Cost) =>
  `$argon2id$v=19$m=${cost.memorySize},t=${cost.passes},p=${cost.parallelism}$`;

/**
 * A well-formed hash at the given parameters with a random salt and digest: unknown emails are verified against
 * it so they cost the same time as a wrong password (a `null` stored hash can never succeed). At the cost new hashes
 * are made at, whatever it is, so an unknown email and a known one answer after the same work (no enumeration by
 * timing): test/auth/accounts/password-upgrade.test.ts.
 */
export const dummyHash = (cost: Argon2Cost) =>
  `${prefixOf(cost)}6nKq2LQ8dNYUVuu7/ktIjQ$TIbi2N3XzgqLGHd9Qq8cVy6wzUmXdt7y1t8/qYKgi1c`;

const encoder = new TextEncoder();

/** Hashes at `cost`: the production parameters unless the config resolved the test suite's (`config.passwordHashCost`). */
export async function hashPassword(password: string, cost: Argon2Cost = ARGON2_PARAMS): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const tag = await argon2id({ ...cost, password: encoder.encode(password), salt });
  return `${prefixOf(cost)}${toBase64(salt)}$${toBase64(tag)}`;
}

export interface PasswordCheck {
  ok: boolean;
  needsRehash: boolean;
}

/**
 * Verifies `password` against a stored hash; `stored` null (unknown user) costs the same as a wrong password at
 * `cost`, which is also what a hash must be at not to need a rehash.
 */
export async function verifyPassword(
  password: string,
  stored: string | null,
  cost: Argon2Cost = ARGON2_PARAMS,
): Promise<PasswordCheck> {
  const bcryptCost = stored ? /^\$2[aby]\$(\d{2})\$/.exec(stored)?.[1] : undefined;
  if (bcryptCost !== undefined) {
    if (Number(bcryptCost) > HASH_BOUNDS.bcryptMaxCost) return { ok: false, needsRehash: false };
    // bcryptjs compares in constant time. Nhost stored bcrypt; these users move to argon2id at their next sign-in.
    return { ok: await bcrypt.compare(password, stored!), needsRehash: true };
  }
  // The other systems' formats an import may store (src/lib/imported-hashes/): verified once, then replaced. The
  // dummy argon2id beside it keeps a fast one (MD5, salted SHA-256) from answering sooner than an unknown email.
  const imported = stored === null ? undefined : verifyImportedHash(password, stored);
  if (imported) {
    const [ok] = await Promise.all([imported, verifyArgon2(password, dummyHash(cost))]);
    return { ok, needsRehash: true };
  }
  const ok = await verifyArgon2(password, stored ?? dummyHash(cost));
  return { ok: ok && stored !== null, needsRehash: !stored?.startsWith(prefixOf(cost)) };
}

const PHC =
  /^\$argon2id\$v=19\$m=(\d{1,7}),t=(\d{1,3}),p=(\d{1,2})\$([A-Za-z0-9+/]{11,64})\$([A-Za-z0-9+/]{22,128})$/;

async function verifyArgon2(password: string, encoded: string): Promise<boolean> {
  const match = PHC.exec(encoded);
  if (!match) return false;
  const [memorySize, passes, parallelism] = [match[1], match[2], match[3]].map(Number) as [
    number,
    number,
    number,
  ];
  if (
    memorySize > HASH_BOUNDS.argon2MaxMemoryKiB ||
    passes > HASH_BOUNDS.argon2MaxPasses ||
    memorySize * passes > HASH_BOUNDS.argon2MaxMemoryPasses ||
    parallelism > HASH_BOUNDS.argon2MaxLanes
  ) {
    return false;
  }
  const expected = fromBase64(match[5]!);
  const actual = await argon2id({
    password: encoder.encode(password),
    salt: fromBase64(match[4]!),
    memorySize,
    passes,
    parallelism,
    tagLength: expected.byteLength,
  });
  return crypto.subtle.timingSafeEqual(actual, expected);
}

/** PHC strings use standard base64 without padding. */
function toBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/=+$/, "");
}

function fromBase64(unpadded: string): Uint8Array {
  return Uint8Array.from(atob(unpadded.padEnd(Math.ceil(unpadded.length / 4) * 4, "=")), (c) =>
    c.charCodeAt(0),
  );
}
