// `npm test`'s second step (after scripts/checks.mjs): the Vitest projects of vitest.config.ts, in two processes at
// once. The compatibility files share one `wrangler dev`, so they run one at a time, and most of that time is spent
// waiting on the server, the browser and the clients, not computing; in one Vitest process they had to run after the
// other projects (projects of one group share its number of lanes), with the machine half idle for minutes. In a
// process of their own they run beside the workers projects from the start, their server booting meanwhile
// (docs/decisions.md, "npm test in two processes").
//
// With file or project arguments (`npm test -- test/auth/…`), one Vitest process runs exactly what was asked, as
// before. Other arguments (reporters, `--outputFile.json=…`) go to both processes; the two JSON reports are merged
// into the one file asked for, so `.ci/run` reads one report as before.
import { spawn } from "node:child_process";
import {
  accessSync,
  constants,
  createWriteStream,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statfsSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
const args = process.argv.slice(2);

/** Arguments that choose what runs: then one process runs exactly that. */
const choosesTests =
  args.some(
    (arg, i) =>
      !arg.startsWith("-") &&
      !/^--outputFile(\.\w+)?$/.test(args[i - 1] ?? "") &&
      !/^--reporter$/.test(args[i - 1] ?? ""),
  ) || args.some((arg) => /^--(project|shard|changed|related)\b/.test(arg));

/**
 * Where the tests' throwaway files go: a directory in memory (Linux's /dev/shm) when there is one, else the system's
 * temporary directory. The storage of every Durable Object, D1 database, KV and R2 the test runtimes make lives under
 * it (Miniflare's, wrangler dev's `--persist-to`), and most tests start sessions, each a Durable Object of its own, so
 * a run creates thousands of small SQLite files and syncs each one's writes. On the 2-core machine's disk, the same
 * eleven sign-in files took 83 s and 38 CPU-s there, 41 s and 32 CPU-s in memory (docs/decisions.md, "Test cost:
 * storage in memory"). The directory is the run's and is removed after it; nothing in it outlives the test that made it.
 */
const SCRATCH_NEEDS = 2 * 1024 ** 3;
function scratchDirectory() {
  try {
    if (process.platform !== "linux" || !statSync("/dev/shm").isDirectory()) return null;
    accessSync("/dev/shm", constants.W_OK);
    // A container's /dev/shm is often 64 MB: a run keeps a few hundred MB there at most, so a small one is passed by.
    const { bavail, bsize } = statfsSync("/dev/shm");
    if (bavail * bsize < SCRATCH_NEEDS) return null;
    return mkdtempSync("/dev/shm/edge-auth-test-");
  } catch {
    return null;
  }
}
const scratch = scratchDirectory();
const testEnv = scratch ? { ...process.env, TMPDIR: scratch } : process.env;
process.on("exit", () => scratch && rmSync(scratch, { recursive: true, force: true }));
// Stopped with Ctrl-C, the Vitest processes stop too (the same process group): the memory is given back all the same.
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));

/** Runs Vitest with `extra`; its output goes to `out` (a stream), or straight through when none is given. */
function run(extra, out) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [vitest, "run", ...extra], {
      cwd: root,
      stdio: ["ignore", out ? "pipe" : "inherit", out ? "pipe" : "inherit"],
      env: testEnv,
    });
    if (out) {
      child.stdout.pipe(out, { end: false });
      child.stderr.pipe(out, { end: false });
    }
    child.on("close", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

if (choosesTests) process.exit(await run(args));

/** `--outputFile.json=FILE` or `--outputFile.json FILE`: where the merged JSON report goes. */
function jsonReportFile() {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg.startsWith("--outputFile.json="))
      return { index: i, file: arg.slice("--outputFile.json=".length) };
    if (arg === "--outputFile.json") return { index: i, file: args[i + 1], pair: true };
  }
  return null;
}
const report = jsonReportFile();
const compatReport = report && join(tmpdir(), `edge-auth-compat-${process.pid}.json`);
const compatArgs = report
  ? args.map((arg, i) =>
      i === report.index && !report.pair
        ? `--outputFile.json=${compatReport}`
        : i === report.index + 1 && report.pair
          ? compatReport
          : arg,
    )
  : args;

// The compatibility files' output is held until the others are done, so the two never interleave.
const compatLog = join(tmpdir(), `edge-auth-compat-${process.pid}.log`);
const held = createWriteStream(compatLog);
const [others, compat] = await Promise.all([
  run([
    "--project",
    "own-storage",
    "--project",
    "tooling",
    "--project",
    "compat-alone",
    "--project",
    "workers",
    ...args,
  ]),
  run(["--project", "compat", ...compatArgs], held),
]);
await new Promise((resolve) => held.end(resolve));
process.stdout.write(
  `\n── the compatibility files (test/compat, one wrangler dev), run beside the above ──\n`,
);
process.stdout.write(readFileSync(compatLog));
rmSync(compatLog, { force: true });

if (report && compatReport && existsSync(compatReport)) {
  const a = existsSync(report.file) ? JSON.parse(readFileSync(report.file, "utf8")) : { testResults: [] };
  const b = JSON.parse(readFileSync(compatReport, "utf8"));
  const merged = { ...a };
  for (const [key, value] of Object.entries(b)) {
    if (key.startsWith("num") && typeof value === "number") merged[key] = (a[key] ?? 0) + value;
  }
  merged.startTime = Math.min(a.startTime ?? b.startTime, b.startTime ?? a.startTime);
  merged.success = Boolean(a.success) && Boolean(b.success);
  merged.testResults = [...(a.testResults ?? []), ...(b.testResults ?? [])];
  writeFileSync(report.file, JSON.stringify(merged));
  rmSync(compatReport, { force: true });
}
process.exit(others !== 0 || compat !== 0 ? 1 : 0);
