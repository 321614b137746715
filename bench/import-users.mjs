// `npm run bench:import` (issue 44, Speed and scale): how fast `npm run admin -- import-users` moves users in from
// each vendor's export file. A bench, not a timed test, and a long one at the default 100,000 users per source.
//
// For each source (auth0, firebase, clerk, cognito, csv) it writes an export file of that many users in the vendor's
// format (one shared hash per source: the bench measures reading and writing, not hashing), then:
//   - parse: reads it in this process with the command's own reader and builds every wire bundle (no service), the
//     rate a dry run's reading costs;
//   - write: runs the real command as a child process against the bundled Worker served by Miniflare (workerd, local
//     D1, migrations applied), as bench/import-nhost.mjs does, twice: the first import, then a rerun (unchanged).
// Every source's users are imported with their password hashes (Firebase's scrypt with its hash_config, the others
// bcrypt), so a first import should say "imported" for all of them and a rerun "unchanged": the table shows the
// outcomes beside the rates, and a run where some were skipped says so there. The CPU of verifying each hash at a
// first sign-in is bench/import-hashers.mjs's.
//
//   node bench/import-users.mjs [--users 100000] [--sources auth0,firebase,clerk,cognito,csv] [--no-write]
import { spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import bcrypt from "bcryptjs";
import { SOURCES } from "../scripts/import-users/command.mjs";
import { bundleOf } from "../scripts/import-users/records.mjs";
import { generateSecrets } from "../scripts/secrets.mjs";
import { applyMigrations, bundle, workerFromBundle } from "./lib.mjs";
import { childrenCpu, USAGE_PRELOAD } from "./process-cpu.mjs";

const { values } = parseArgs({
  options: {
    users: { type: "string", default: "100000" },
    sources: { type: "string", default: Object.keys(SOURCES).join(",") },
    "no-write": { type: "boolean", default: false },
  },
});
const USERS = Number(values.users);
const NAMES = values.sources.split(",").filter((name) => Object.hasOwn(SOURCES, name));
if (!Number.isInteger(USERS) || USERS < 1) throw new Error("--users takes a whole number ≥ 1");

const BCRYPT = bcrypt.hashSync("bench password", 10);
// Firebase's scrypt reference example (test/fixtures/import-users/README.md), the same for every user.
const FIREBASE = {
  hash: "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==",
  salt: "42xEC+ixf3L2lw==",
};
const HASH_CONFIG =
  "hash_config {\n  algorithm: SCRYPT,\n  base64_signer_key: jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==,\n" +
  "  base64_salt_separator: Bw==,\n  rounds: 8,\n  mem_cost: 14,\n}\n";

const email = (source, i) => `bench-${source}-${i}@example.com`;
const oid = (i) => i.toString(16).padStart(24, "0");

/** Writes lines through a stream, waiting when it is full (memory stays flat at any size). */
async function writeLines(path, lines) {
  const out = createWriteStream(path);
  for (const line of lines) if (!out.write(`${line}\n`)) await new Promise((r) => out.once("drain", r));
  await new Promise((r) => out.end(r));
}

function* range(f) {
  for (let i = 0; i < USERS; i++) yield f(i);
}

/** The export file(s) of one source, in its vendor's format; answers the command's options. */
async function generate(dir, source) {
  const file = join(dir, `${source}.export`);
  if (source === "auth0") {
    await writeLines(
      file,
      range((i) =>
        JSON.stringify({
          user_id: `auth0|${oid(i)}`,
          email: email(source, i),
          email_verified: true,
          name: `Bench ${i}`,
          created_at: "2021-01-01T00:00:00.000Z",
          updated_at: "2021-01-01T00:00:00.000Z",
          identities: [
            { provider: "auth0", user_id: oid(i), connection: "Username-Password-Authentication" },
          ],
        }),
      ),
    );
    const passwords = join(dir, "auth0-passwords.ndjson");
    await writeLines(
      passwords,
      range((i) => JSON.stringify({ _id: { $oid: oid(i) }, email: email(source, i), passwordHash: BCRYPT })),
    );
    return { file, passwords };
  }
  if (source === "firebase") {
    const users = [
      ...range((i) => ({
        localId: `fb${i.toString(36).padStart(26, "0")}`,
        email: email(source, i),
        emailVerified: true,
        passwordHash: FIREBASE.hash,
        salt: FIREBASE.salt,
        createdAt: "1600000000000",
        providerUserInfo: [{ providerId: "password", rawId: email(source, i) }],
      })),
    ];
    writeFileSync(file, JSON.stringify({ users }));
    const hashConfig = join(dir, "hash-config.txt");
    writeFileSync(hashConfig, HASH_CONFIG);
    return { file, hashConfig };
  }
  if (source === "cognito") {
    const users = [
      ...range((i) => ({
        Username: `user${i}`,
        Enabled: true,
        UserStatus: "CONFIRMED",
        UserCreateDate: "2022-01-01T00:00:00.000000+00:00",
        Attributes: [
          { Name: "email", Value: email(source, i) },
          { Name: "email_verified", Value: "true" },
        ],
      })),
    ];
    writeFileSync(file, JSON.stringify({ Users: users }));
    return { file };
  }
  if (source === "clerk") {
    await writeLines(file, [
      "id,first_name,last_name,username,primary_email_address,primary_phone_number,verified_email_addresses,unverified_email_addresses,verified_phone_numbers,unverified_phone_numbers,totp_secret,password_digest,password_hasher",
      ...range(
        (i) =>
          `user_2ZKRG${i.toString().padStart(22, "0")},Bench,${i},,${email(source, i)},,${email(source, i)},,,,,${BCRYPT},bcrypt`,
      ),
    ]);
    return { file };
  }
  await writeLines(file, [
    "id,email,email_verified,phone,display_name,password_hash,password_hasher,metadata",
    ...range((i) => `legacy-${i},${email(source, i)},true,,Bench ${i},${BCRYPT},bcrypt,`),
  ]);
  return { file };
}

/** The command's reader and the wire bundles, in this process: users per second of reading. */
async function parse(options, source) {
  const start = performance.now();
  let n = 0;
  for await (const item of SOURCES[source](options)) {
    if (!item.record) continue;
    bundleOf(item.record);
    n++;
  }
  return { n, ms: performance.now() - start };
}

function importUsers(server, adminSecret, source, options) {
  const args = ["--from", source, "--file", options.file];
  if (options.passwords) args.push("--passwords", options.passwords);
  if (options.hashConfig) args.push("--hash-config", options.hashConfig);
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const workerd = childrenCpu("workerd");
    const child = spawn(
      process.execPath,
      [
        `--import=${USAGE_PRELOAD}`,
        "scripts/admin.mjs",
        "import-users",
        ...args,
        "--server",
        server,
        "--json",
      ],
      {
        env: { ...process.env, ADMIN_SECRET: adminSecret, AUTH_URL: "" },
        stdio: ["ignore", "pipe", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    let usage = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stdio[3].on("data", (chunk) => (usage += chunk));
    child.stderr.on("data", (chunk) => (stderr = (stderr + chunk).slice(-4000)));
    child.on("error", reject);
    child.on("close", (code) => {
      try {
        const users = JSON.parse(stdout).tables["auth.users"];
        const { cpu = null, maxRSS = null } = usage ? JSON.parse(usage) : {};
        // The run's CPU: the command's own and what it cost workerd (the Worker and local D1), in seconds.
        const served = workerd === null ? null : childrenCpu("workerd") - workerd;
        resolve({ code, ms: performance.now() - start, users, cpu, served, maxRSS });
      } catch {
        reject(new Error(`import-users ${source} exited ${code}:\n${stderr}`));
      }
    });
  });
}

const rate = (n, ms) => (ms > 0 ? Math.round(n / (ms / 1000)).toString() : "–");
/** "command + workerd" CPU seconds of a run, and its peak RSS. */
const cost = (run) =>
  `${run.cpu === null ? "n/a" : run.cpu.toFixed(1)} + ${run.served === null ? "n/a" : run.served.toFixed(1)} s, ${run.maxRSS === null ? "n/a" : (run.maxRSS / 1024).toFixed(0)} MB`;
const outcomes = (users) =>
  ["imported", "unchanged", "kept", "skipped"]
    .filter((k) => users[k] > 0)
    .map((k) => `${k} ${users[k]}`)
    .join(", ");

const dir = mkdtempSync(join(tmpdir(), "edge-auth-bench-import-users-"));
let mf;
try {
  let server;
  let adminSecret;
  if (!values["no-write"]) {
    process.stderr.write("bundling the Worker…\n");
    bundle(join(dir, "build"));
    const secrets = generateSecrets();
    adminSecret = secrets.AUTH_ADMIN_SECRET;
    mf = workerFromBundle(dir, { ...secrets, AUTH_RATE_LIMIT_ENABLE: "false" });
    server = `${(await mf.ready).origin}/auth/v1`;
    await applyMigrations(mf);
  }
  const cpu = cpus();
  console.log(`\nimport-users: ${USERS} users per source`);
  console.log(
    `${cpu.length} × ${cpu[0]?.model.trim() ?? "?"}, Node ${process.version}, workerd via Miniflare on loopback (local D1 = SQLite)\n`,
  );
  console.log(
    "source     parse users/s   first s  first users/s  first outcome                 CPU cmd + workerd, RSS   rerun s  rerun users/s  rerun outcome                 CPU cmd + workerd, RSS",
  );
  for (const source of NAMES) {
    process.stderr.write(`${source}: writing ${USERS} users…\n`);
    const options = await generate(dir, source);
    const parsed = await parse(options, source);
    let line = `${source.padEnd(10)} ${rate(parsed.n, parsed.ms).padStart(13)}`;
    if (server) {
      process.stderr.write(`${source}: first import…\n`);
      const first = await importUsers(server, adminSecret, source, options);
      process.stderr.write(`${source}: rerun…\n`);
      const rerun = await importUsers(server, adminSecret, source, options);
      line += ` ${(first.ms / 1000).toFixed(1).padStart(9)} ${rate(first.users.read, first.ms).padStart(14)}  ${outcomes(first.users).padEnd(28)}  ${cost(first).padEnd(22)}`;
      line += ` ${(rerun.ms / 1000).toFixed(1).padStart(8)} ${rate(rerun.users.read, rerun.ms).padStart(14)}  ${outcomes(rerun.users).padEnd(28)}  ${cost(rerun)}`;
    }
    console.log(line);
  }
  console.log(
    "\nparse: the command's reader and bundles in this process (what a dry run reads); first/rerun: the real",
  );
  console.log(
    "command against the Worker, users read per second of the whole run (a rerun finds every user unchanged).",
  );
  console.log(
    "CPU: user + system seconds of the command and of workerd (the Worker and local D1) in the run (n/a without /proc):",
  );
  console.log("on a busy machine the wall time grows with the load, the CPU seconds hardly.");
} finally {
  await mf?.dispose();
  rmSync(dir, { recursive: true, force: true });
}
