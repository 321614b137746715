// better-auth at a password hash OWASP lists as equal to its minimum (issue 48: "the comparison stays at equal
// strength"): its own hasher, `node:crypto`'s scrypt in its own `salt:key` hex layout, at N=2^14, r=8, p=5 (16 MiB),
// one of OWASP's equal scrypt rows and, measured in workerd by bench/hashers.mjs, as cheap as the cheapest of them
// (N=2^13, r=8, p=10). Passed to better-auth through its documented `emailAndPassword.password.{hash, verify}`.
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";

export const EQUAL_SCRYPT = { N: 16384, r: 8, p: 5, dkLen: 64 };

function derive(password, salt) {
  const { N, r, p, dkLen } = EQUAL_SCRYPT;
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFKC"), salt, dkLen, { N, r, p, maxmem: 256 * N * r }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

export const equalStrengthPassword = {
  async hash(password) {
    const salt = randomBytes(16).toString("hex");
    return `${salt}:${(await derive(password, salt)).toString("hex")}`;
  },
  async verify({ hash, password }) {
    const [salt, key] = hash.split(":");
    if (!salt || !key) return false;
    const expected = Buffer.from(key, "hex");
    const actual = await derive(password, salt);
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  },
};
