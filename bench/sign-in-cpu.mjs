// Issue 48: sign-in and sign-up against better-auth by the CPU each costs its workerd, not by requests a second. On
// a shared machine req/s follow the load; the CPU time a workerd process spends per request (from /proc) does much
// less, so its ratio is the part of the comparison that a busy machine cannot take away. Ours (bundled and served as
// bench/run.mjs serves it, rate limits off) against better-auth's peer (bench/peers/better-auth) with its default
// hasher and with the OWASP-equal one (bench/peers/better-auth/equal-hasher.mjs), requests one at a time, the sides
// interleaved in batches.
//
//   node bench/sign-in-cpu.mjs [--rounds 5] [--batch 10]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { betterAuthWorker, bundle, bundleBetterAuth, PASSWORD, serveOurs } from "./lib.mjs";
import { describeBetterAuthPeer, describeOurHasher } from "./peers/better-auth/describe.mjs";
import { BASE_PATH, EQUAL_BASE_PATH } from "./peers/better-auth/options.mjs";
import { betterAuthSchemaSql } from "./peers/better-auth/schema.mjs";

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "5" }, batch: { type: "string", default: "10" } },
});
const ROUNDS = Number(values.rounds);
const BATCH = Number(values.batch);
const ORIGIN = "http://127.0.0.1";

/** The workerd children of this process. */
function workerds() {
  return readFileSync(`/proc/self/task/${process.pid}/children`, "utf8")
    .trim()
    .split(/\s+/)
    .filter((pid) => pid && readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "workerd");
}
/** CPU seconds (user + system) of one process. */
function cpuOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

const dir = mkdtempSync(join(tmpdir(), "sign-in-cpu-"));
const loadBefore = load();
bundle(join(dir, "build"));
bundleBetterAuth(join(dir, "build-better-auth"));
const ours = await serveOurs(dir, false);
const ourPid = workerds().at(-1);
const peer = betterAuthWorker(dir, "build-better-auth", {
  BETTER_AUTH_SECRET: crypto.randomUUID() + crypto.randomUUID(),
  BETTER_AUTH_URL: ORIGIN,
});
const theirOrigin = (await peer.ready).origin;
const theirPid = workerds().find((pid) => pid !== ourPid && Number(pid) > Number(ourPid));
const db = await peer.getD1Database("DB");
await db.batch((await betterAuthSchemaSql()).map((sql) => db.prepare(sql)));

let n = 0;
const email = (side) => `${side}-${process.pid}-${n++}@example.com`;
const post = async (url, body, headers = {}) => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
};
const theirs = (base) => ({
  signUp: () =>
    post(
      `${theirOrigin}${base}/sign-up/email`,
      { email: email("ba"), password: PASSWORD, name: "B" },
      { origin: ORIGIN },
    ),
  signIn: (address) =>
    post(`${theirOrigin}${base}/sign-in/email`, { email: address, password: PASSWORD }, { origin: ORIGIN }),
  pid: theirPid,
});
const SIDES = {
  ours: {
    signUp: () => post(`${ours.base}/signup/email-password`, { email: email("ours"), password: PASSWORD }),
    signIn: (address) => post(`${ours.base}/signin/email-password`, { email: address, password: PASSWORD }),
    pid: ourPid,
  },
  "better-auth (its default scrypt)": theirs(BASE_PATH),
  "better-auth (OWASP-equal scrypt)": theirs(EQUAL_BASE_PATH),
};
// One user per side to sign in, and a warm-up of each path (first requests compile and instantiate).
const users = {};
for (const [side, api] of Object.entries(SIDES)) {
  users[side] = email("user");
  await (side === "ours"
    ? post(`${ours.base}/signup/email-password`, { email: users[side], password: PASSWORD })
    : post(
        `${theirOrigin}${side.includes("equal") ? EQUAL_BASE_PATH : BASE_PATH}/sign-up/email`,
        { email: users[side], password: PASSWORD, name: "B" },
        { origin: ORIGIN },
      ));
  for (let i = 0; i < 3; i++) await api.signIn(users[side]);
  await api.signUp();
}

const samples = Object.fromEntries(
  ["signIn", "signUp"].map((row) => [row, Object.fromEntries(Object.keys(SIDES).map((side) => [side, []]))]),
);
for (let round = 0; round < ROUNDS; round++) {
  for (const row of ["signIn", "signUp"]) {
    for (const [side, api] of Object.entries(SIDES)) {
      const before = cpuOf(api.pid);
      for (let i = 0; i < BATCH; i++) await (row === "signIn" ? api.signIn(users[side]) : api.signUp());
      // What a request left to run after its answer (audit, events) is counted once it ran: a short settle.
      await new Promise((resolve) => setTimeout(resolve, 50));
      samples[row][side].push(((cpuOf(api.pid) - before) * 1000) / BATCH);
    }
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `\n${[...describeBetterAuthPeer(join(dir, "build-better-auth")), describeOurHasher()].join("\n")}`,
);
console.log(
  `\nCPU of its workerd per request, ms (median of ${ROUNDS} batches of ${BATCH}, one request at a time, sides interleaved); load average before ${loadBefore}, after ${load()}`,
);
for (const row of ["signIn", "signUp"]) {
  const ourMs = median(samples[row].ours);
  for (const [side, xs] of Object.entries(samples[row])) {
    const ms = median(xs);
    const ratio =
      side === "ours"
        ? ""
        : `  theirs/ours ${(ms / ourMs).toFixed(2)}× (ours ${(ms / ourMs).toFixed(2)}× as many per CPU-second)`;
    console.log(
      `${row === "signIn" ? "sign-in" : "sign-up"}  ${side.padEnd(34)} ${ms.toFixed(1).padStart(7)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})${ratio}`,
    );
  }
}
await ours.mf.dispose();
await peer.dispose();
rmSync(dir, { recursive: true, force: true });
