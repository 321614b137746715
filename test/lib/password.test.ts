import bcrypt from "bcryptjs";
import { describe, expect, it } from "vitest";
import { argon2id } from "../../src/lib/argon2";
import { toHex } from "../../src/lib/hex";
import {
  ARGON2_PARAMS,
  ARGON2_PARAMS_BEFORE_48,
  hashPassword,
  TEST_ARGON2_PARAMS,
  verifyPassword,
} from "../../src/lib/password";

describe("password hashing", () => {
  // The one place the production cost is asserted: the rest of the suite hashes at TEST_ARGON2_PARAMS
  // (TEST_PASSWORD_HASH=cheap, refused by the config unless the server is local: test/local-settings.test.ts).
  // Issue 48: OWASP's last equal argon2id row (m=7 MiB, t=5, p=1), the cheapest of them in workerd; the hashes of
  // before (its first row, m=19 MiB, t=2) still verify and ask for a rehash.
  it("hashes with argon2id at OWASP's equal parameters m=7 MiB t=5, salted; the old cost still verifies", async () => {
    expect(ARGON2_PARAMS).toEqual({ memorySize: 7_168, passes: 5, parallelism: 1, tagLength: 32 });
    const first = await hashPassword("hunter2hunter2");
    const second = await hashPassword("hunter2hunter2");
    expect(first).toMatch(/^\$argon2id\$v=19\$m=7168,t=5,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(first).not.toBe(second);
    const old = await hashPassword("hunter2hunter2", ARGON2_PARAMS_BEFORE_48);
    expect(old).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await verifyPassword("hunter2hunter2", old)).toEqual({ ok: true, needsRehash: true });
    expect((await verifyPassword("hunter3hunter3", old)).ok).toBe(false);
  });

  // Threat: a stored hash that names its own cost (an import, a tampered row) turns one sign-in into a CPU or memory bomb.
  it("refuses stored hashes whose parameters exceed the bounds, without computing them", async () => {
    const salt = "6nKq2LQ8dNYUVuu7/ktIjQ";
    const tag = "TIbi2N3XzgqLGHd9Qq8cVy6wzUmXdt7y1t8/qYKgi1c";
    // m=47104,t=5: each within its own bound, their product (the work) above 46 MiB × 4 passes.
    for (const params of ["m=9999999,t=2,p=1", "m=19456,t=999,p=1", "m=19456,t=2,p=64", "m=47104,t=5,p=1"]) {
      const started = Date.now();
      expect(await verifyPassword("anything", `$argon2id$v=19$${params}$${salt}$${tag}`)).toEqual({
        ok: false,
        needsRehash: true,
      });
      expect(Date.now() - started).toBeLessThan(1000);
    }
    const costly = bcrypt.hashSync("hunter2hunter2", 4).replace(/^\$2b\$04\$/, "$2b$31$");
    expect(await verifyPassword("hunter2hunter2", costly)).toEqual({ ok: false, needsRehash: false });
    // Within the bounds, imported bcrypt hashes still verify.
    expect((await verifyPassword("hunter2hunter2", bcrypt.hashSync("hunter2hunter2", 10))).ok).toBe(true);
  });

  it("hashes at the test suite's cost when asked, which the production cost then asks to rehash", async () => {
    const cheap = await hashPassword("hunter2hunter2", TEST_ARGON2_PARAMS);
    expect(cheap).toMatch(/^\$argon2id\$v=19\$m=8,t=1,p=1\$/);
    expect(await verifyPassword("hunter2hunter2", cheap, TEST_ARGON2_PARAMS)).toEqual({
      ok: true,
      needsRehash: false,
    });
    expect(await verifyPassword("hunter2hunter2", cheap)).toEqual({ ok: true, needsRehash: true });
    expect((await verifyPassword("hunter3hunter3", cheap, TEST_ARGON2_PARAMS)).ok).toBe(false);
  });

  it("verifies the right password and refuses a wrong one", async () => {
    const hash = await hashPassword("hunter2hunter2");
    expect(await verifyPassword("hunter2hunter2", hash)).toEqual({ ok: true, needsRehash: false });
    expect((await verifyPassword("hunter3hunter3", hash)).ok).toBe(false);
  });

  it("computes RFC 9106 §5.3's Argon2id test vector", async () => {
    const tag = await argon2id({
      password: new Uint8Array(32).fill(1),
      salt: new Uint8Array(16).fill(2),
      secret: new Uint8Array(8).fill(3),
      ad: new Uint8Array(12).fill(4),
      memorySize: 32,
      passes: 3,
      parallelism: 4,
      tagLength: 32,
    });
    expect(toHex(tag)).toBe("0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659");
  });

  it("verifies PHC strings at other parameters and asks for a rehash", async () => {
    const salt = new Uint8Array(16).fill(7);
    const tag = await argon2id({
      password: new TextEncoder().encode("pw-weak-params"),
      salt,
      memorySize: 1024,
      passes: 1,
      parallelism: 1,
      tagLength: 32,
    });
    const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/=+$/, "");
    const weak = `$argon2id$v=19$m=1024,t=1,p=1$${b64(salt)}$${b64(tag)}`;
    expect(await verifyPassword("pw-weak-params", weak)).toEqual({ ok: true, needsRehash: true });
    expect((await verifyPassword("pw-other", weak)).ok).toBe(false);
  });

  it("verifies bcrypt hashes imported from Nhost and asks for a rehash", async () => {
    const hash = bcrypt.hashSync("nhost-password", 4);
    expect(hash.startsWith("$2b$")).toBe(true);
    expect(await verifyPassword("nhost-password", hash)).toEqual({ ok: true, needsRehash: true });
    expect((await verifyPassword("other-password", hash)).ok).toBe(false);
    expect((await verifyPassword("nhost-password", hash.replace("$2b$", "$2a$"))).ok).toBe(true);
  });

  it("never succeeds without a stored hash (unknown user), and refuses malformed hashes", async () => {
    expect((await verifyPassword("anything", null)).ok).toBe(false);
    expect((await verifyPassword("anything", "$argon2id$garbage")).ok).toBe(false);
    expect((await verifyPassword("anything", "plain-text")).ok).toBe(false);
  });
});
