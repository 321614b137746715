import { describe, expect, it } from "vitest";
import { type Argon2Cost, verifyPassword } from "../../src/lib/password";

/**
 * The imported formats' timing at sign-in (the formats themselves, through the import and the real sign-in, are in
 * test/move-in/imported-hashes.test.ts).
 */

// A cost whose dummy verification takes tens of milliseconds (the suite's cheap one takes microseconds, like an MD5):
// far above the runtime clock's coarseness, so the comparison below is of work, not of clock ticks.
const COST: Argon2Cost = { memorySize: 8192, passes: 3, parallelism: 1, tagLength: 32 };

const elapsedMs = async (stored: string | null) => {
  const started = Date.now();
  await verifyPassword("a wrong password", stored, COST);
  return Date.now() - started;
};

/**
 * The shortest time of each kind of stored value, measured in turns (unknown, then each format, again and again). A
 * busy machine only ever lengthens a run, so the shortest is the one closest to the work itself: a median moved with
 * the load (at a load of 20 on two cores, 129 ms against 268 for the same work).
 */
async function fastestMs(kinds: (string | null)[]): Promise<number[]> {
  const times: number[][] = kinds.map(() => []);
  for (let run = 0; run < 7; run++) {
    for (const [index, kind] of kinds.entries()) times[index]!.push(await elapsedMs(kind));
  }
  return times.map((runs) => Math.min(...runs));
}

describe("imported password hashes at sign-in", () => {
  // Threat: a fast imported hash (MD5, salted SHA-256) answers a wrong password far sooner than an unknown email
  // does (which verifies a dummy argon2id), telling an attacker which addresses are imported accounts.
  it("a wrong password against a fast imported hash costs at least what an unknown email costs", async () => {
    await elapsedMs(null); // the WASM module's first instantiation is not a verification
    const fast = [`$md5-hex$${"0".repeat(32)}`, `sha256$salt$${"0".repeat(64)}`];
    const [unknown, ...formats] = await fastestMs([null, ...fast]);
    expect(unknown).toBeGreaterThan(5);
    // A quarter: without the dummy verification a fast format answers in 0 ms against the unknown's 11.5 (quiet), and
    // a machine at a load of 8–11 once gave the unknown's shortest run 44 ms and MD5's 16 with the dummy in place.
    for (const [index, ms] of formats.entries())
      expect(ms, fast[index]).toBeGreaterThanOrEqual(unknown! * 0.25);
  });
});
