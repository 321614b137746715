// The shard simulation (scripts/simulate-shards.mjs, docs/scaling.md "Past ten million users"): 100 M users fit D1's
// limits in every database with the directory sharded by its keys' slots, and the check fails a plan that does not.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const simulate = (...args: string[]) =>
  run(process.execPath, ["scripts/simulate-shards.mjs", "--seed", "1", "--check", ...args]).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number; stdout: string }) => error,
  );

// Each run costs well under a second of CPU; on a busy machine it waits for a core.
const SLOW_MACHINE_MS = 60_000;

describe("the shard simulation", () => {
  // Threat: a capacity plan in the docs that no run backs, or a database (the directory's, formerly one for
  // everybody) quietly past 10 GB or its write budget at 100 M users.
  it(
    "100 M users: every database under 10 GB, the write budget and the read budget, audit kept or not",
    async () => {
      const [lean, typical] = await Promise.all([
        simulate(
          "--users",
          "100000000",
          "--shards",
          "128",
          "--replay-shards",
          "4",
          "--bytes-per-user",
          "4009",
        ),
        simulate("--users", "100000000", "--shards", "1024", "--replay-shards", "4"),
      ]);
      for (const { code, stdout } of [lean, typical]) {
        expect(code).toBe(0);
        expect(stdout).toMatch(/every database within D1's limits: 4 replayed \(of (128|1024)\)/);
        expect(stdout).toMatch(/no database holds a key per user/);
        expect(stdout).toMatch(/over the write budget \(100\/s at the peak minute\): 0 of/);
      }
    },
    SLOW_MACHINE_MS,
  );

  it(
    "a plan that does not fit (64 shards with audit events in them) exits 1, naming the limit",
    async () => {
      const { code, stdout } = await simulate(
        "--users",
        "100000000",
        "--shards",
        "64",
        "--replay-shards",
        "2",
      );
      expect(code).toBe(1);
      expect(stdout).toMatch(/OVER 10 GB/);
      expect(stdout).toMatch(/NOT every database within D1's limits/);
    },
    SLOW_MACHINE_MS,
  );

  it(
    "hashing every user (no replay mode) routes as the service does and balances",
    async () => {
      const { code, stdout } = await simulate("--users", "100000", "--shards", "4");
      expect(code).toBe(0);
      const users = /imbalance \(max\/mean over shards\): users ([0-9.]+)/.exec(stdout);
      expect(Number(users![1])).toBeLessThan(1.03);
    },
    SLOW_MACHINE_MS,
  );
});
