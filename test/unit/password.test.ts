import bcrypt from "bcryptjs";
import { describe, expect, it } from "vitest";
import { hashPassword, verifyPassword } from "../../src/lib/password";

describe("password hashing", () => {
  it("hashes with argon2id at OWASP's minimum parameters, salted", async () => {
    const first = await hashPassword("hunter2hunter2");
    const second = await hashPassword("hunter2hunter2");
    expect(first).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(first).not.toBe(second);
  });

  it("verifies the right password and refuses a wrong one", async () => {
    const hash = await hashPassword("hunter2hunter2");
    expect(await verifyPassword("hunter2hunter2", hash)).toEqual({ ok: true, needsRehash: false });
    expect((await verifyPassword("hunter3hunter3", hash)).ok).toBe(false);
  });

  it("asks for a rehash of argon2id hashes below the current parameters", async () => {
    const { argon2id } = await import("argon2-wasm-edge");
    const weak = await argon2id({
      password: "pw-weak-params",
      salt: new Uint8Array(16).fill(7),
      memorySize: 1024,
      iterations: 1,
      parallelism: 1,
      hashLength: 32,
      outputType: "encoded",
    });
    expect(await verifyPassword("pw-weak-params", weak)).toEqual({ ok: true, needsRehash: true });
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
