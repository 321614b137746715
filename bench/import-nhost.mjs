// `npm run bench:import` (issue 29, Scale): how fast `npm run admin -- import-nhost` moves a Nhost project in, and
// how much memory the command needs for it. A bench, not a timed test, and a long one (minutes at the default
// 100,000 users and 10,000 files), so it is not part of `npm run bench`.
//
// It starts a throwaway Postgres with Nhost's own schema (test/support/postgres.ts), fills it with set-based SQL
// (users with one bcrypt hash shared by all, a role and one live refresh token each, in Nhost's formats) and files
// written to a directory named by id, serves the bundled Worker with Miniflare as the other benches do (workerd,
// local D1 and R2 in a fresh temporary directory, migrations applied), and runs the real command as a child
// process, twice: the first import, then a delta run with nothing changed. Per run it prints the time of each phase
// (from the command's progress lines on stderr), users, tokens, files and bytes per second, and the command's peak
// RSS (its own `process.resourceUsage().maxRSS` at exit, through a preload). On Linux it also samples the command's
// RSS through the users phase, so a growth with the number of users read would show.
//
//   node bench/import-nhost.mjs [--users 100000] [--files 10000]
//
// The numbers are miniflare's SQLite and local R2 on this machine, not production D1 and R2: docs/performance.md
// ("Import from Nhost") puts them next to the deployment's limits.
import { spawn } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, platform, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { generateSecrets } from "../scripts/secrets.mjs";
import { nhostPasswordHash } from "../test/fixtures/nhost/seed.ts";
import { loadNhostSchema, startPostgres } from "../test/support/postgres.ts";
import { applyMigrations, bundle, workerFromBundle } from "./lib.mjs";

const { values } = parseArgs({
  options: {
    users: { type: "string", default: "100000" },
    files: { type: "string", default: "10000" },
  },
});
const USERS = Number(values.users);
const FILES = Number(values.files);
if (!Number.isInteger(USERS) || USERS < 1 || !Number.isInteger(FILES) || FILES < 0)
  throw new Error("--users takes a whole number ≥ 1, --files one ≥ 0");

/** File sizes: 1–8 KiB, spread evenly (a few KB each, as avatars and attachments). */
const fileSize = (i) => 1024 + ((i * 7919) % 7169);

/** The child's peak RSS as the kernel counts it, written to fd 3 when it exits (process.exit included). */
const PRELOAD = `data:text/javascript,${encodeURIComponent(
  'import { writeSync } from "node:fs";' +
    'process.on("exit", () => { try { writeSync(3, JSON.stringify({ maxRSS: process.resourceUsage().maxRSS })); } catch {} });',
)}`;

const seconds = (ms) => ms / 1000;
const mb = (kb) => (kb === null ? "n/a" : (kb / 1024).toFixed(0));
const rate = (n, ms) => (ms > 0 ? (n / seconds(ms)).toFixed(0) : "–");

/** Nhost's rows, as many as asked, in one statement per table. */
async function fillUsers(db) {
  const passwordHash = nhostPasswordHash("bench password");
  await db.query(
    `INSERT INTO auth.users (id, email, password_hash, display_name, locale, email_verified, default_role, metadata,
       created_at, updated_at, last_seen)
     SELECT gen_random_uuid(), 'bench-' || i || '@example.com', $1, 'Bench User ' || i, 'en', true, 'user',
       jsonb_build_object('n', i), now() - (i % 1000) * interval '1 hour', now() - (i % 100) * interval '1 hour', now()
     FROM generate_series(1, $2) AS i`,
    [passwordHash, USERS],
  );
  await db.query(`INSERT INTO auth.user_roles (user_id, role) SELECT id, 'user' FROM auth.users`);
  // The client holds a random UUID; the row its hash as Nhost writes it: `\x` and the hex SHA-256 of its text.
  await db.query(
    `INSERT INTO auth.refresh_tokens (created_at, expires_at, user_id, type, refresh_token_hash)
     SELECT now(), now() + interval '30 days', id, 'regular',
       '\\x' || encode(sha256(gen_random_uuid()::text::bytea), 'hex')
     FROM auth.users`,
  );
}

/** storage.files rows in the default bucket (etag: the quoted MD5, as S3 answered), their bytes in `dir`. */
async function fillFiles(db, dir) {
  let bytes = 0;
  for (let start = 0; start < FILES; start += 5000) {
    const rows = { id: [], name: [], size: [], etag: [] };
    for (let i = start; i < Math.min(FILES, start + 5000); i++) {
      const id = randomUUID();
      const content = randomBytes(fileSize(i));
      writeFileSync(join(dir, id), content);
      rows.id.push(id);
      rows.name.push(`file-${i}.bin`);
      rows.size.push(content.length);
      rows.etag.push(`"${createHash("md5").update(content).digest("hex")}"`);
      bytes += content.length;
    }
    await db.query(
      `INSERT INTO storage.files (id, bucket_id, name, size, mime_type, etag, is_uploaded)
       SELECT id, 'default', name, size, 'application/octet-stream', etag, true
       FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[]) AS f(id, name, size, etag)`,
      [rows.id, rows.name, rows.size, rows.etag],
    );
  }
  return bytes;
}

/** The command's resident set on Linux (/proc), in kB; null elsewhere. */
function rssOf(pid) {
  if (platform() !== "linux") return null;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/**
 * One run of the real command, as a person runs it against a deployment (`--server`, ADMIN_SECRET). Answers the
 * times of its phases, its report (--json) and its memory.
 */
function importNhost({ url, filesDir, server, adminSecret }) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(
      process.execPath,
      [
        `--import=${PRELOAD}`,
        "scripts/admin.mjs",
        "import-nhost",
        ...["--database-url", url, "--files-dir", filesDir, "--server", server, "--json"],
      ],
      {
        env: { ...process.env, ADMIN_SECRET: adminSecret, AUTH_URL: "" },
        stdio: ["ignore", "pipe", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let usage = "";
    let stderrTail = "";
    let pending = "";
    let shown = 0;
    /** Table → [time of its first progress line, time of its last]. */
    const lines = new Map();
    const samples = [];
    const sampler = setInterval(() => {
      const kb = rssOf(child.pid);
      if (kb !== null) samples.push([performance.now() - start, kb]);
    }, 200);
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stdio[3].on("data", (chunk) => {
      usage += chunk;
    });
    child.stderr.on("data", (chunk) => {
      const now = performance.now() - start;
      stderrTail = (stderrTail + chunk).slice(-4000);
      pending += chunk;
      const complete = pending.split("\n");
      pending = complete.pop();
      for (const line of complete) {
        const table = /^([\w.]+(?: \(removals\))?): /.exec(line)?.[1];
        if (table) lines.set(table, [lines.get(table)?.[0] ?? now, now]);
        // The command's own progress, about once in 10 s.
        if (now - shown > 10_000 || !table) {
          shown = now;
          process.stderr.write(`  [${seconds(now).toFixed(0).padStart(5)} s] ${line}\n`);
        }
      }
    });
    child.on("error", reject);
    child.on("close", (code) => {
      clearInterval(sampler);
      const end = performance.now() - start;
      let report = null;
      try {
        report = JSON.parse(stdout);
      } catch {}
      if (code !== 0 || !report?.ok)
        return reject(new Error(`import-nhost exited ${code}:\n${stderrTail}\n${stdout.slice(0, 4000)}`));
      const last = (table) => lines.get(table)?.[1] ?? null;
      const buckets = last("storage.buckets");
      const users = last("auth.users");
      const files = last("storage.files") ?? users;
      let maxRSS = null;
      try {
        maxRSS = JSON.parse(usage).maxRSS;
      } catch {}
      // RSS in each quarter of the users phase: flat when memory does not grow with the users read.
      const quarters =
        samples.length === 0
          ? null
          : [1, 2, 3, 4].map((q) => {
              const from = buckets + ((users - buckets) * (q - 1)) / 4;
              const to = buckets + ((users - buckets) * q) / 4;
              const inside = samples.filter(([t]) => t >= from && t <= to).map(([, kb]) => kb);
              return inside.length ? Math.max(...inside) : null;
            });
      resolve({
        report,
        total: end,
        setup: buckets,
        users: users - buckets,
        files: files - users,
        tail: end - files,
        maxRSS,
        quarters,
      });
    });
  });
}

function printRun(name, run) {
  const t = run.report.tables;
  const tokens = t["auth.refresh_tokens"] ?? {};
  const files = t["storage.files"] ?? {};
  const carried = (counts) => (counts.imported ?? 0) + (counts.updated ?? 0) + (counts.unchanged ?? 0);
  console.log(
    `${name.padEnd(22)} ${seconds(run.total).toFixed(1).padStart(8)} ${seconds(run.setup).toFixed(1).padStart(8)} ${seconds(run.users).toFixed(1).padStart(8)} ${rate(carried(t["auth.users"]), run.users).padStart(8)} ${rate(carried(tokens), run.users).padStart(9)} ${seconds(run.files).toFixed(1).padStart(8)} ${rate(carried(files), run.files).padStart(8)} ${(run.report.bytes > 0 ? (run.report.bytes / 1024 ** 2 / seconds(run.files)).toFixed(2) : "–").padStart(8)} ${seconds(run.tail).toFixed(1).padStart(7)} ${mb(run.maxRSS).padStart(9)}`,
  );
}

function expectCounts(name, run, outcome, bytes) {
  const t = run.report.tables;
  const problems = [
    ["auth.users", USERS],
    ["auth.refresh_tokens", USERS],
    ["storage.files", FILES],
  ].filter(([table, n]) => n > 0 && (t[table]?.[outcome] ?? 0) !== n);
  if (bytes !== null && run.report.bytes !== bytes) problems.push(["bytes", bytes]);
  if (problems.length > 0) {
    console.log(
      `${name}: expected every row ${outcome}, got ${JSON.stringify(t)} (${run.report.bytes} bytes)`,
    );
    process.exitCode = 1;
  }
}

const dir = mkdtempSync(join(tmpdir(), "edge-auth-bench-import-"));
const filesDir = join(dir, "files");
mkdirSync(filesDir);
let postgres;
let mf;
try {
  process.stderr.write("starting Postgres, loading Nhost's schema, bundling the Worker…\n");
  postgres = await startPostgres();
  await loadNhostSchema(postgres.url);
  bundle(join(dir, "build"));
  const secrets = generateSecrets();
  mf = workerFromBundle(dir, { ...secrets, AUTH_RATE_LIMIT_ENABLE: "false" });
  const server = `${(await mf.ready).origin}/auth/v1`;
  await applyMigrations(mf);

  const db = new pg.Client({ connectionString: postgres.url });
  await db.connect();
  let bytes;
  let filled;
  try {
    process.stderr.write(`generating ${USERS} users and ${FILES} files…\n`);
    const began = performance.now();
    await fillUsers(db);
    const usersDone = performance.now();
    bytes = await fillFiles(db, filesDir);
    await db.query("ANALYZE");
    filled = { users: usersDone - began, files: performance.now() - usersDone };
    filled.postgres = (await db.query("SHOW server_version")).rows[0].server_version;
  } finally {
    await db.end();
  }

  const options = { url: postgres.url, filesDir, server, adminSecret: secrets.AUTH_ADMIN_SECRET };
  process.stderr.write("first import…\n");
  const first = await importNhost(options);
  expectCounts("first import", first, "imported", bytes);
  process.stderr.write("delta run (nothing changed in Nhost)…\n");
  const delta = await importNhost(options);
  expectCounts("delta run", delta, "unchanged", null);

  const d1 = await mf.getD1Database("DB");
  const count = async (table) => (await d1.prepare(`SELECT count(*) AS n FROM ${table}`).first()).n;
  const here = {
    users: await count("users"),
    sessions: await count("sessions"),
    refreshTokens: await count("refresh_tokens"),
    files: await count("files"),
    // D1's own measure of the database (what counts against its 10 GB), as `wrangler d1 info` reports it.
    bytes: (await d1.prepare("SELECT 1").run()).meta.size_after,
  };

  const cpu = cpus();
  console.log(
    `\nImport from Nhost: ${USERS} users (a role and one live refresh token each), ${FILES} files ` +
      `(${(bytes / 1024 ** 2).toFixed(1)} MiB, 1–8 KiB each)`,
  );
  console.log(
    `${cpu.length} × ${cpu[0]?.model.trim() ?? "?"}, Node ${process.version}, Postgres ${filled.postgres}, ` +
      "workerd via Miniflare on loopback (local D1 = SQLite, local R2)",
  );
  console.log(
    `generated in Postgres: users ${seconds(filled.users).toFixed(1)} s, files ${seconds(filled.files).toFixed(1)} s`,
  );
  console.log(
    `in the service after the runs: ${here.users} users, ${here.sessions} sessions, ${here.refreshTokens} refresh tokens, ${here.files} files; D1 database ${here.bytes === undefined ? "size n/a" : `${(here.bytes / 1024 ** 2).toFixed(1)} MiB`}\n`,
  );
  console.log(
    "run                       total s  start s  users s  users/s  tokens/s  files s  files/s    MiB/s  tail s  peak RSS MB",
  );
  printRun("first import", first);
  printRun("delta run (no change)", delta);
  console.log(
    "\nstart: connect, removals pass and buckets; users: users with roles and tokens; files: the dangling-row check,",
  );
  console.log(
    "then file records and bytes (4 PUTs at once); tail: `…/completed` and the report. Phases from the command's",
  );
  console.log("progress lines on stderr (printed at most once a second: ±1 s).");
  for (const [name, run] of [
    ["first import", first],
    ["delta run", delta],
  ]) {
    console.log(
      `RSS of the command in each quarter of the users phase, ${name}: ${
        run.quarters
          ? run.quarters.map((kb) => (kb === null ? "–" : `${mb(kb)} MB`)).join(", ")
          : "n/a (Linux only)"
      }`,
    );
  }
} finally {
  await mf?.dispose();
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
}
