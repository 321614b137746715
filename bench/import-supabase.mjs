// `npm run bench:import` (issue 44, Speed and scale): how fast `npm run admin -- import-supabase` moves a Supabase
// project's users in. A bench, not a timed test, and a long one (minutes at the default 100,000 users).
//
// It starts a throwaway Postgres with Supabase Auth's own migrations (test/support/postgres.ts), fills it with
// set-based SQL in GoTrue's formats (test/fixtures/supabase/seed.ts writes the same rows one user at a time): every
// user with one shared bcrypt hash (`$2a$`, cost 10), an email identity and a GitHub one, and a session with its
// refresh tokens (a revoked one rotated out, then the live one). It serves the bundled Worker with Miniflare as the
// other benches do (workerd, local D1, migrations applied) and runs the real command as a child process twice: the
// first import, then a rerun with nothing changed in Supabase. Per run: the time, users, identities and sessions per
// second, and the command's peak RSS (its own `process.resourceUsage().maxRSS` at exit, through a preload).
// Postgres, workerd and the temporary directory are stopped and removed at the end, whatever happened.
//
//   node bench/import-supabase.mjs [--users 100000]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import bcrypt from "bcryptjs";
import pg from "pg";
import { generateSecrets } from "../scripts/secrets.mjs";
import { loadSupabaseSchema, startPostgres } from "../test/support/postgres.ts";
import { applyMigrations, bundle, workerFromBundle } from "./lib.mjs";
import { childrenCpu, USAGE_PRELOAD } from "./process-cpu.mjs";

const { values } = parseArgs({ options: { users: { type: "string", default: "100000" } } });
const USERS = Number(values.users);
if (!Number.isInteger(USERS) || USERS < 1) throw new Error("--users takes a whole number ≥ 1");

/** GoTrue's rows for USERS users, one statement per table. */
async function fillSupabase(db) {
  // Go's bcrypt writes `$2a$`; bcryptjs `$2b$`, the same algorithm.
  const hash = bcrypt.hashSync("bench password", 10).replace(/^\$2b\$/, "$2a$");
  await db.query(
    `INSERT INTO auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
       confirmation_token, recovery_token, email_change_token_new, email_change, raw_app_meta_data,
       raw_user_meta_data, created_at, updated_at, last_sign_in_at, is_sso_user, is_anonymous)
     SELECT '00000000-0000-0000-0000-000000000000', gen_random_uuid(), 'authenticated', 'authenticated',
       'bench-' || i || '@example.com', $1, now(), '', '', '', '',
       '{"provider": "email", "providers": ["email", "github"]}'::jsonb,
       jsonb_build_object('n', i, 'full_name', 'Bench User ' || i),
       now() - (i % 1000) * interval '1 hour', now() - (i % 100) * interval '1 hour', now(), false, false
     FROM generate_series(1, $2) AS i`,
    [hash, USERS],
  );
  // The email identity GoTrue makes at sign-up (provider_id = the user's id), and a linked GitHub account.
  await db.query(
    `INSERT INTO auth.identities (id, provider_id, user_id, identity_data, provider, last_sign_in_at, created_at,
       updated_at)
     SELECT gen_random_uuid(), id::text, id,
       jsonb_build_object('sub', id::text, 'email', email, 'email_verified', true, 'phone_verified', false),
       'email', now(), created_at, now()
     FROM auth.users`,
  );
  await db.query(
    `INSERT INTO auth.identities (id, provider_id, user_id, identity_data, provider, last_sign_in_at, created_at,
       updated_at)
     SELECT gen_random_uuid(), (1000000 + (raw_user_meta_data->>'n')::int)::text, id,
       jsonb_build_object('sub', (1000000 + (raw_user_meta_data->>'n')::int)::text, 'email', email),
       'github', now(), created_at, now()
     FROM auth.users`,
  );
  // A password sign-in's session at aal1 and its v1 refresh tokens (12 characters of [a-z0-9]): one rotated out
  // (revoked), then the live one, as GoTrue leaves them after one refresh.
  await db.query(
    `INSERT INTO auth.sessions (id, user_id, created_at, updated_at, aal)
     SELECT gen_random_uuid(), id, now(), now(), 'aal1' FROM auth.users`,
  );
  await db.query(
    `INSERT INTO auth.refresh_tokens (instance_id, token, user_id, revoked, created_at, updated_at, session_id)
     SELECT '00000000-0000-0000-0000-000000000000', substr(md5(random()::text), 1, 12), user_id::text, r.revoked,
       now(), now(), s.id
     FROM auth.sessions s CROSS JOIN (VALUES (true), (false)) AS r(revoked)
     ORDER BY s.id, r.revoked DESC`,
  );
  await db.query("ANALYZE");
}

/** One run of the real command as a person runs it against a deployment: its report, time and peak memory. */
function importSupabase({ url, server, adminSecret }) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const before = { workerd: childrenCpu("workerd"), postgres: childrenCpu("postgres") };
    const child = spawn(
      process.execPath,
      [`--import=${USAGE_PRELOAD}`, "scripts/admin.mjs", "import-supabase", "--server", server, "--json"],
      {
        env: { ...process.env, SUPABASE_DATABASE_URL: url, ADMIN_SECRET: adminSecret, AUTH_URL: "" },
        stdio: ["ignore", "pipe", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let usage = "";
    let stderrTail = "";
    let shown = 0;
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stdio[3].on("data", (chunk) => (usage += chunk));
    child.stderr.on("data", (chunk) => {
      stderrTail = (stderrTail + chunk).slice(-4000);
      const now = performance.now() - start;
      // The command's own progress, about once in 10 s.
      if (now - shown > 10_000) {
        shown = now;
        process.stderr.write(`  [${(now / 1000).toFixed(0).padStart(5)} s] ${String(chunk).trim()}\n`);
      }
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - start;
      let report = null;
      try {
        report = JSON.parse(stdout);
      } catch {}
      if (code !== 0 || !report?.ok)
        return reject(new Error(`import-supabase exited ${code}:\n${stderrTail}\n${stdout.slice(0, 4000)}`));
      let own = { maxRSS: null, cpu: null };
      try {
        own = JSON.parse(usage);
      } catch {}
      const spent = (name) => (before[name] === null ? null : childrenCpu(name) - before[name]);
      resolve({ report, ms, ...own, workerd: spent("workerd"), postgres: spent("postgres") });
    });
  });
}

/** Every row of `table` in the run's `outcome` column, or the bench says so and exits non-zero. */
function expectCounts(name, run, outcome, expected) {
  const t = run.report.tables;
  const wrong = Object.entries(expected).filter(([table, n]) => (t[table]?.[outcome] ?? 0) !== n);
  if (wrong.length > 0) {
    console.log(`${name}: expected ${JSON.stringify(expected)} ${outcome}, got ${JSON.stringify(t)}`);
    process.exitCode = 1;
  }
}

const rate = (n, ms) => (ms > 0 ? Math.round(n / (ms / 1000)).toString() : "–");
const carried = (counts = {}) => (counts.imported ?? 0) + (counts.updated ?? 0) + (counts.unchanged ?? 0);

function printRun(name, run) {
  const t = run.report.tables;
  const cells = [
    (run.ms / 1000).toFixed(1).padStart(8),
    rate(carried(t["auth.users"]), run.ms).padStart(8),
    rate(carried(t["auth.identities"]), run.ms).padStart(13),
    rate(carried(t["auth.sessions"]), run.ms).padStart(11),
    (run.maxRSS === null ? "n/a" : (run.maxRSS / 1024).toFixed(0)).padStart(12),
    ...[run.cpu, run.workerd, run.postgres].map((s) => (s === null ? "n/a" : s.toFixed(1)).padStart(9)),
  ];
  console.log(`${name.padEnd(22)} ${cells.join(" ")}`);
}

const dir = mkdtempSync(join(tmpdir(), "edge-auth-bench-import-supabase-"));
let postgres;
let mf;
try {
  process.stderr.write("starting Postgres, loading Supabase Auth's schema, bundling the Worker…\n");
  postgres = await startPostgres();
  await loadSupabaseSchema(postgres.url);
  bundle(join(dir, "build"));
  const secrets = generateSecrets();
  mf = workerFromBundle(dir, { ...secrets, AUTH_RATE_LIMIT_ENABLE: "false" });
  const server = `${(await mf.ready).origin}/auth/v1`;
  await applyMigrations(mf);

  const db = new pg.Client({ connectionString: postgres.url });
  await db.connect();
  let filled;
  let version;
  try {
    process.stderr.write(`generating ${USERS} users with identities and sessions…\n`);
    const began = performance.now();
    await fillSupabase(db);
    filled = performance.now() - began;
    version = (await db.query("SHOW server_version")).rows[0].server_version;
  } finally {
    await db.end();
  }

  const options = { url: postgres.url, server, adminSecret: secrets.AUTH_ADMIN_SECRET };
  // Only the live refresh token of each session is carried (sessions.mjs reads the newest unrevoked one).
  const every = {
    "auth.users": USERS,
    "auth.identities": 2 * USERS,
    "auth.sessions": USERS,
    "auth.refresh_tokens": USERS,
  };
  process.stderr.write("first import…\n");
  const first = await importSupabase(options);
  expectCounts("first import", first, "imported", every);
  process.stderr.write("rerun (nothing changed in Supabase)…\n");
  const rerun = await importSupabase(options);
  expectCounts("rerun", rerun, "unchanged", { "auth.users": USERS });

  const d1 = await mf.getD1Database("DB");
  const count = async (table) => (await d1.prepare(`SELECT count(*) AS n FROM ${table}`).first()).n;
  const here = {
    users: await count("users"),
    providers: await count("user_providers"),
    sessions: await count("sessions"),
    bytes: (await d1.prepare("SELECT 1").run()).meta.size_after,
  };
  const cpu = cpus();
  console.log(
    `\nImport from Supabase: ${USERS} users (a password, an email and a GitHub identity, a session with a live and a revoked refresh token each)`,
  );
  console.log(
    `${cpu.length} × ${cpu[0]?.model.trim() ?? "?"}, Node ${process.version}, Postgres ${version}, ` +
      "workerd via Miniflare on loopback (local D1 = SQLite)",
  );
  console.log(`generated in Postgres in ${(filled / 1000).toFixed(1)} s`);
  console.log(
    `in the service after the runs: ${here.users} users, ${here.providers} linked identities, ${here.sessions} sessions; ` +
      `D1 database ${here.bytes === undefined ? "size n/a" : `${(here.bytes / 1024 ** 2).toFixed(1)} MiB`}\n`,
  );
  console.log(
    "run                     total s  users/s  identities/s  sessions/s  peak RSS MB  CPU s: command  workerd  postgres",
  );
  printRun("first import", first);
  printRun("rerun (no change)", rerun);
  console.log(
    "\nRates over the whole run (connect, the removals pass, the users with their identities and sessions, the report).",
  );
  console.log(
    "CPU: user + system seconds of the command, of workerd (the Worker and local D1) and of Postgres in the run; on a\n" +
      "busy machine the wall time grows with the load, the CPU seconds hardly (n/a without /proc).",
  );
} finally {
  await mf?.dispose();
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
}
