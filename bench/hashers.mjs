// Issue 48: the password hashers OWASP's Password Storage Cheat Sheet lists as equal, measured in workerd (Miniflare,
// `nodejs_compat`) as the service would run them: workerd's native scrypt (`node:crypto`, BoringSSL), argon2id in
// the WASM the service bundles (OpenPGP.js's `argon2id`, SIMD), @noble/hashes' scrypt in JavaScript (what
// better-auth runs where its `workerd` export condition is not used), and hash-wasm's argon2id where it is installed.
//
// CPU per hash: workerd's CPU time (/proc, bench/process-cpu.mjs) across `--hashes` hashes of one request, the
// hashers interleaved round by round so a busy machine slows them alike (their ratios are what to read; the load
// average is printed before and after). Peak memory: a fresh workerd per hasher, 64 requests of one hash each in
// flight at once, its peak RSS (VmHWM) less that of a fresh workerd that answered one trivial request.
//
//   node bench/hashers.mjs [--rounds 3] [--hashes 10]
//   HASH_WASM_DIR=/some/prefix/node_modules node bench/hashers.mjs   (hash-wasm installed outside the project)
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { convertV4MiniflareOptions, Log, LogLevel, Miniflare } from "miniflare";
import { childrenCpu } from "./process-cpu.mjs";

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "3" }, hashes: { type: "string", default: "10" } },
});
const ROUNDS = Number(values.rounds);
const HASHES = Number(values.hashes);

/** [kind, what it is]: kinds as bench/hashers-worker.js reads them. OWASP's equal rows first, then the others. */
const HASHERS = [
  ["argon2id:19456:2", "argon2id m=19 MiB t=2 (the service's until issue 48; OWASP's first)"],
  ["argon2id:47104:1", "argon2id m=46 MiB t=1 (OWASP equal)"],
  ["argon2id:12288:3", "argon2id m=12 MiB t=3 (OWASP equal)"],
  ["argon2id:9216:4", "argon2id m=9 MiB t=4 (OWASP equal)"],
  ["argon2id:7168:5", "argon2id m=7 MiB t=5 (OWASP equal)"],
  ["scrypt:131072:8:1", "scrypt node:crypto N=2^17 r=8 p=1 (OWASP's first, 128 MiB)"],
  ["scrypt:65536:8:2", "scrypt node:crypto N=2^16 r=8 p=2 (OWASP equal, 64 MiB)"],
  ["scrypt:32768:8:3", "scrypt node:crypto N=2^15 r=8 p=3 (OWASP equal, 32 MiB)"],
  ["scrypt:16384:8:5", "scrypt node:crypto N=2^14 r=8 p=5 (OWASP equal, 16 MiB)"],
  ["scrypt:8192:8:10", "scrypt node:crypto N=2^13 r=8 p=10 (OWASP equal, 8 MiB)"],
  ["scrypt:16384:16:1:64", "scrypt node:crypto N=2^14 r=16 p=1 (better-auth's, workerd condition)"],
  ["noble-scrypt:16384:16:1:64", "scrypt @noble/hashes N=2^14 r=16 p=1 (better-auth's, JS fallback)"],
  // Only where HASH_WASM_DIR names an install of it (not a dependency of the project).
  ...(process.env.HASH_WASM_DIR ? [["hash-wasm:19456:2", "argon2id m=19 MiB t=2, hash-wasm"]] : []),
];

const dir = mkdtempSync(join(tmpdir(), "hashers-"));
const hashWasm = process.env.HASH_WASM_DIR;
await build({
  entryPoints: [resolve("bench/hashers-worker.js")],
  bundle: true,
  format: "esm",
  platform: "neutral",
  conditions: ["workerd", "worker", "browser"],
  mainFields: ["module", "main"],
  external: ["node:*", "*.wasm", ...(hashWasm ? [] : ["hash-wasm"])],
  nodePaths: hashWasm ? [hashWasm] : [],
  outfile: join(dir, "worker.js"),
  logLevel: "error",
});
for (const file of ["simd.wasm", "no-simd.wasm"])
  copyFileSync(join("node_modules/argon2id/dist", file), join(dir, file));

const serve = () =>
  new Miniflare(
    convertV4MiniflareOptions({
      log: new Log(LogLevel.WARN),
      host: "127.0.0.1",
      port: 0,
      modulesRoot: dir,
      modules: [
        { type: "ESModule", path: join(dir, "worker.js") },
        { type: "CompiledWasm", path: join(dir, "simd.wasm") },
        { type: "CompiledWasm", path: join(dir, "no-simd.wasm") },
      ],
      compatibilityDate: "2026-11-01",
      compatibilityFlags: ["nodejs_compat"],
      cf: false,
    }),
  );

/** The workerd processes under this one, newest last (Miniflare starts one per instance). */
function workerdPids() {
  const pids = [];
  for (const task of readFileSync(`/proc/self/task/${process.pid}/children`, "utf8").trim().split(/\s+/)) {
    if (!task) continue;
    try {
      if (readFileSync(`/proc/${task}/comm`, "utf8").trim() === "workerd") pids.push(Number(task));
    } catch {}
  }
  return pids;
}
const peakRssMiB = (pid) =>
  Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? Number.NaN) / 1024;

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
const loadBefore = load();
const mf = serve();
const origin = (await mf.ready).origin;
const get = async (path) => {
  const response = await fetch(`${origin}${path}`);
  const text = await response.text();
  return response.ok ? null : text;
};

const usable = [];
for (const [kind, what] of HASHERS) {
  const refused = await get(`/hash?kind=${kind}&n=1`); // warm-up: instantiates the WASM, compiles the JS
  if (refused) console.log(`${what}: refused in workerd: ${refused.split("\n")[0]}`);
  else usable.push([kind, what]);
}

const cpu = Object.fromEntries(usable.map(([kind]) => [kind, []]));
for (let round = 0; round < ROUNDS; round++) {
  // Rotated each round, so no hasher always follows the same one.
  const order = usable.map((_, i) => usable[(i + round) % usable.length]);
  for (const [kind] of order) {
    const before = childrenCpu("workerd");
    const refused = await get(`/hash?kind=${kind}&n=${HASHES}`);
    if (refused) throw new Error(`${kind}: ${refused}`);
    cpu[kind].push(((childrenCpu("workerd") - before) * 1000) / HASHES);
  }
}
await mf.dispose();

/** Peak RSS of a fresh workerd with 64 requests of one hash in flight, less a fresh one's after a trivial request. */
async function peakAt64(kind) {
  const fresh = serve();
  const at = (await fresh.ready).origin;
  const pid = workerdPids().at(-1);
  await fetch(`${at}/hash?kind=argon2id:8:1&n=0`).then((r) => r.text());
  const idle = peakRssMiB(pid);
  const answers = await Promise.all(
    Array.from({ length: 64 }, () => fetch(`${at}/hash?kind=${kind}&n=1`).then((r) => r.status)),
  );
  const peak = peakRssMiB(pid);
  await fresh.dispose();
  return { idle, peak, failed: answers.filter((s) => s !== 200).length };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(cpu[usable[0][0]]);
console.log(
  `\nPassword hashers in workerd (Miniflare ${JSON.parse(readFileSync("node_modules/miniflare/package.json", "utf8")).version}, nodejs_compat): ${ROUNDS} rounds × ${HASHES} hashes, interleaved; load average before ${loadBefore}, after the CPU rounds ${load()}`,
);
// CPU first (it is done), then each hasher's memory (a fresh workerd apiece: the slow part).
console.log(
  `${"hasher".padEnd(70)} ${"CPU ms/hash".padStart(11)} ${"range".padStart(13)} ${"× first".padStart(8)}`,
);
for (const [kind, what] of usable) {
  const xs = cpu[kind];
  const range = `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
  console.log(
    `${what.padEnd(70)} ${median(xs).toFixed(1).padStart(11)} ${range.padStart(13)} ${(median(xs) / base).toFixed(2).padStart(8)}`,
  );
}
console.log("\npeak RSS of a fresh workerd with 64 hashes in flight: MiB over its idle peak (absolute)");
for (const [kind, what] of usable) {
  const { idle, peak, failed } = await peakAt64(kind);
  console.log(
    `${what.padEnd(70)} ${failed ? `${failed}/64 failed` : `+${(peak - idle).toFixed(0)} (${peak.toFixed(0)})`}`,
  );
}
console.log(`load average at the end ${load()}`);
rmSync(dir, { recursive: true, force: true });
