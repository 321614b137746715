import { describe, expect, it } from "vitest";
import { type Argon2Cost, verifyPassword } from "../../src/lib/password";

/**
 * The imported formats' timing at sign-in (the formats themselves, through the import and the real sign-in, are in
 * test/move-in/imported-hashes.test.ts).
 */

// A cost whose dummy verification takes milliseconds, not the suite's cheap one (microseconds, like an MD5).
const COST: Argon2Cost = { memorySize: 4096, passes: 2, parallelism: 1, tagLength: 32 };

async function medianMs(stored: string | null): Promise<number> {
  const times: number[] = [];
  for (let run = 0; run < 5; run++) {
    const started = Date.now();
    await verifyPassword("a wrong password", stored, COST);
    times.push(Date.now() - started);
  }
  return times.sort((a, b) => a - b)[2]!;
}

describe("imported password hashes at sign-in", () => {
  // Threat: a fast imported hash (MD5, salted SHA-256) answers a wrong password far sooner than an unknown email
  // does (which verifies a dummy argon2id), telling an attacker which addresses are imported accounts.
  it("a wrong password against a fast imported hash costs at least what an unknown email costs", async () => {
    await medianMs(null); // the WASM module's first instantiation is not a verification
    const unknown = await medianMs(null);
    expect(unknown).toBeGreaterThan(2);
    for (const fast of [`$md5-hex$${"0".repeat(32)}`, `sha256$salt$${"0".repeat(64)}`])
      expect(await medianMs(fast), fast).toBeGreaterThanOrEqual(unknown * 0.5);
  });
});
