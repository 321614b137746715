import { argon2id, setWASMModules } from "argon2-wasm-edge";
import argon2WASM from "argon2-wasm-edge/wasm/argon2.wasm";
import blake2bWASM from "argon2-wasm-edge/wasm/blake2b.wasm";
import bcrypt from "bcryptjs";

/**
 * Password hashing. argon2id at OWASP's minimum (m=19 MiB, t=2, p=1; OWASP Password Storage Cheat Sheet), chosen by
 * measurement over scrypt and PBKDF2: see docs/decisions.md. Hashes are stored in the PHC string format, which names
 * the algorithm and its parameters, so they can be raised later: `verifyPassword` reports `needsRehash` for any hash
 * that is not at the current parameters (bcrypt hashes imported from Nhost included).
 */

setWASMModules({ argon2WASM, blake2bWASM });

export const ARGON2_PARAMS = { memorySize: 19_456, iterations: 2, parallelism: 1, hashLength: 32 } as const;
const CURRENT_PREFIX = `$argon2id$v=19$m=${ARGON2_PARAMS.memorySize},t=${ARGON2_PARAMS.iterations},p=${ARGON2_PARAMS.parallelism}$`;

/**
 * A well-formed hash at the current parameters with a random salt and digest: unknown emails are verified against
 * it so they cost the same time as a wrong password (a `null` stored hash can never succeed).
 */
const DUMMY_HASH =
  "$argon2id$v=19$m=19456,t=2,p=1$6nKq2LQ8dNYUVuu7/ktIjQ$TIbi2N3XzgqLGHd9Qq8cVy6wzUmXdt7y1t8/qYKgi1c";

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  return argon2id({ ...ARGON2_PARAMS, password, salt, outputType: "encoded" });
}

export interface PasswordCheck {
  ok: boolean;
  needsRehash: boolean;
}

/** Verifies `password` against a stored hash; `stored` null (unknown user) costs the same as a wrong password. */
export async function verifyPassword(password: string, stored: string | null): Promise<PasswordCheck> {
  if (stored?.startsWith("$2a$") || stored?.startsWith("$2b$") || stored?.startsWith("$2y$")) {
    // bcryptjs compares in constant time. Nhost stored bcrypt; these users move to argon2id at their next sign-in.
    return { ok: await bcrypt.compare(password, stored), needsRehash: true };
  }
  const ok = await verifyArgon2(password, stored ?? DUMMY_HASH);
  return { ok: ok && stored !== null, needsRehash: !stored?.startsWith(CURRENT_PREFIX) };
}

const PHC = /^\$argon2(id|i|d)\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

async function verifyArgon2(password: string, encoded: string): Promise<boolean> {
  const match = PHC.exec(encoded);
  if (match?.[1] !== "id") return false;
  const [memorySize, iterations, parallelism] = [match[2], match[3], match[4]].map(Number) as [
    number,
    number,
    number,
  ];
  const expected = fromBase64(match[6]!);
  const actual = await argon2id({
    password,
    salt: fromBase64(match[5]!),
    memorySize,
    iterations,
    parallelism,
    hashLength: expected.byteLength,
    outputType: "binary",
  });
  // The library's own verify compares strings with `===`; compare the raw digests in constant time instead.
  return actual.byteLength === expected.byteLength && crypto.subtle.timingSafeEqual(actual, expected);
}

function fromBase64(unpadded: string): Uint8Array {
  return Uint8Array.from(atob(unpadded.padEnd(Math.ceil(unpadded.length / 4) * 4, "=")), (c) =>
    c.charCodeAt(0),
  );
}
