// `npm start` (scripts/start.mjs) as a developer runs it, in a checkout of its own: a temporary directory with the
// project's configuration, sources and dependencies linked in, so that its .dev.vars, its local state under .wrangler/
// and the file recording the running server are the test's, never the developer's. On a port another program holds
// it must say so at once (it used to print the URL block, its readiness probe answered by the other program, and
// then fail); with a setting the service refuses it prints that error once and stops; on a free one it serves,
// records its port for `npm run admin`, and forgets it when stopped, and with AUTH_MIRROR_DATABASE_URL in its
// .dev.vars it binds the Postgres mirror (MIRROR_DB) to that database.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPostgres } from "../support/postgres";
import { freePort } from "./ports";

/**
 * How long a first `npm start` with two databases may take to come up: every migration applied to each database (in
 * one workerd: scripts/local-migrations.mjs; ~0.2 s a migration beside the rest of the suite, 92 in 35 s on a disk
 * of the busy 2-core machine), then `wrangler dev`'s start. The budget grows with the migrations rather than a fixed
 * one that each new migration brings nearer.
 */
const MIGRATIONS = readdirSync(new URL("../../migrations", import.meta.url)).filter((name) =>
  name.endsWith(".sql"),
).length;
const FIRST_START_MS = 60_000 + 500 * 2 * MIGRATIONS;

const runFile = promisify(execFile);
const ROOT = process.cwd();
const START = join(ROOT, "scripts", "start.mjs");
const ADMIN = join(ROOT, "scripts", "admin.mjs");
const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
const RUNNING_FILE = join(".wrangler", "edge-auth-running.json");

/** The environment of a developer's shell, without anything naming a server, a port or a secret. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { PORT: _port, AUTH_URL: _url, ADMIN_SECRET: _secret, ...env } = process.env;
  return { ...env, NO_COLOR: "1", WRANGLER_SEND_METRICS: "false", ...extra };
}

/** A checkout of the project in a temporary directory: configuration copied, the rest linked. */
function checkout(): string {
  const dir = mkdtempSync(join(tmpdir(), "edge-auth-start-"));
  for (const file of ["package.json", "wrangler.toml", "wrangler.images.toml", "tsconfig.json"]) {
    cpSync(join(ROOT, file), join(dir, file));
  }
  for (const linked of ["src", "migrations", "node_modules"])
    symlinkSync(join(ROOT, linked), join(dir, linked));
  return dir;
}

interface Started {
  child: ChildProcess;
  output: () => { stdout: string; stderr: string };
  exited: Promise<number | null>;
}

/** `npm start` in `cwd`, in a process group of its own so that it and its wrangler can always be stopped. */
function start(cwd: string, env: NodeJS.ProcessEnv): Started {
  const child = spawn(process.execPath, [START], {
    cwd,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk) => (stdout += chunk));
  child.stderr?.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, output: () => ({ stdout, stderr }), exited };
}

/** Ends the process group, whatever state it is in. */
function stopGroup(started: Started, signal: NodeJS.Signals = "SIGKILL") {
  try {
    if (started.child.pid) process.kill(-started.child.pid, signal);
  } catch {}
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether the user with this email reaches the mirror's auth.users within `ms`. */
async function mirroredWithin(url: string, email: string, ms: number): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const deadline = Date.now() + ms; Date.now() < deadline; ) {
      const found = await client
        .query("SELECT 1 FROM auth.users WHERE email = $1", [email])
        .catch(() => null);
      if (found?.rows.length) return true;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return false;
  } finally {
    await client.end();
  }
}

const dirs: string[] = [];
const groups: Started[] = [];
const afterAllStop: { stop(): Promise<void> }[] = [];
afterAll(async () => {
  for (const started of groups) stopGroup(started);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await Promise.all(afterAllStop.map((postgres) => postgres.stop()));
});

describe("npm start on a port another program holds", () => {
  let other: Server;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    // Any server at all: this one says 200 to everything, /auth/v1/healthz included.
    other = createHttpServer((_request, response) => response.end("OK"));
    await new Promise<void>((resolve) => other.listen(port, "127.0.0.1", resolve));
  });
  afterAll(() => new Promise<void>((resolve) => other.close(() => resolve())));

  it("stops at once, naming the port and a free one to use instead, and prints no URL", async () => {
    const cwd = checkout();
    dirs.push(cwd);
    const started = start(cwd, cleanEnv({ PORT: String(port) }));
    groups.push(started);
    const code = await within(started.exited, 20_000, "npm start on a taken port").catch((error) => {
      stopGroup(started);
      throw new Error(`${error.message}:\n${JSON.stringify(started.output(), null, 2)}`);
    });
    const { stdout, stderr } = started.output();
    expect(code, stdout + stderr).toBe(1);
    const suggested = new RegExp(`^start: port ${port} is taken: PORT=(\\d+) npm start$`, "m").exec(stderr);
    expect(suggested, stderr).not.toBeNull();
    expect(Number(suggested![1])).not.toBe(port);
    expect(stdout).not.toContain("is running on port");
    expect(stdout).not.toContain("auth API");
    // Nothing was set up for a server that cannot start.
    expect(existsSync(join(cwd, ".dev.vars"))).toBe(false);
    expect(existsSync(join(cwd, RUNNING_FILE))).toBe(false);
  }, 30_000);
});

// Issue 42: a setting the Worker refuses (src/config.ts reads them at the first request, inside wrangler dev) made every
// readiness probe log the error; two minutes later start printed ~370 copies of it and "did not answer". The Worker's
// side (the one line it logs) is test/config.test.ts's; here start's answer to that line, with a stand-in wrangler
// (test/fakes/wrangler-dev.mjs) whose Worker refuses as ours does: a real wrangler dev start-up cost this case 19 s of
// CPU, a fifth of the file, and the other case below starts one.
describe("npm start with a setting the service refuses", () => {
  it("prints the configuration error once and exits 1, without waiting out the two minutes", async () => {
    const cwd = checkout();
    dirs.push(cwd);
    writeFileSync(join(cwd, ".dev.vars"), "AUTH_UI_LOCALES=en,xx\n");
    const port = await freePort();
    const started = start(
      cwd,
      cleanEnv({
        PORT: String(port),
        EDGE_AUTH_WRANGLER: join(ROOT, "test", "fakes", "wrangler-dev.mjs"),
        FAKE_CONFIG_REFUSAL:
          'invalid configuration: AUTH_UI_LOCALES.1: Invalid option: expected one of "en"|"de"',
      }),
    );
    groups.push(started);
    // The work before the refusal is start's own: write .dev.vars, migrate a local D1 (every migration in one
    // workerd, ~5 s on a quiet 2-core machine, past 20 s under a loaded CI's other lanes). Half of start's two-minute
    // deadline still tells "stopped at the refusal" from "waited the deadline out".
    const code = await within(started.exited, 60_000, "npm start with a refused setting").catch((error) => {
      stopGroup(started);
      throw new Error(`${error.message}:\n${JSON.stringify(started.output(), null, 2)}`);
    });
    stopGroup(started);
    const { stdout, stderr } = started.output();
    expect(code, stdout + stderr).toBe(1);
    expect(stderr).toMatch(
      /^start: the service refused its configuration: invalid configuration: AUTH_UI_LOCALES/m,
    );
    expect(stderr).toContain(`Fix the setting in .dev.vars`);
    // Once: the line, not one copy per probe.
    expect((stdout + stderr).match(/AUTH_UI_LOCALES/g)).toHaveLength(1);
    expect(stderr).not.toContain("did not answer");
    expect(stdout).not.toContain("is running on port");
    expect(existsSync(join(cwd, RUNNING_FILE))).toBe(false);
  }, 90_000);
});

/** The index of a user's database among two, as src/db/shards.ts routes: the first 12 bits of SHA-256(id). */
const shardOfTwo = (id: string) =>
  createHash("sha256").update(id.toLowerCase()).digest()[0]! >= 0x80 ? 1 : 0;

// One start for what a developer's own settings do: the mirror's database and a second D1 database, both in the
// checkout's .dev.vars (and wrangler.toml), proven by the same running server; a wrangler dev start is most of the
// time of either check.
describe("npm start on a free port, with the mirror and two local D1 databases in .dev.vars", () => {
  it(
    "serves there, records the port for npm run admin, binds the mirror, migrates and fills each database AUTH_D1_SHARDS lists, and forgets the port when stopped",
    async () => {
      const cwd = checkout();
      dirs.push(cwd);
      const port = await freePort();
      // A second database declared as wrangler.toml's comment says, and listed in .dev.vars.
      writeFileSync(
        join(cwd, "wrangler.toml"),
        `${readFileSync(join(cwd, "wrangler.toml"), "utf8")}
[[d1_databases]]
binding = "DB_1"
database_name = "edge-auth-shard-1"
database_id = "00000000-0000-0000-0000-000000000001"
migrations_dir = "migrations"
`,
      );
      // A developer's own settings in .dev.vars (kept as they are): the Postgres mirror's database (docs/hasura.md) and
      // the databases users are spread over.
      // A database of the shared Postgres when the compat project started one (test/support/postgres.ts), with a
      // password in its URL as a real one would have (the server ignores it).
      const postgres = await startPostgres();
      afterAllStop.push(postgres);
      const withPassword = new URL(postgres.url);
      withPassword.password = "not-to-be-shown";
      const mirrorUrl = withPassword.toString();
      writeFileSync(
        join(cwd, ".dev.vars"),
        `AUTH_MIRROR_DATABASE_URL=${mirrorUrl}\nAUTH_D1_SHARDS=DB,DB_1\n`,
      );
      const started = start(cwd, cleanEnv({ PORT: String(port) }));
      groups.push(started);
      const deadline = Date.now() + FIRST_START_MS;
      while (!started.output().stdout.includes("Logs follow")) {
        if (started.child.exitCode !== null || Date.now() > deadline) {
          stopGroup(started);
          throw new Error(`npm start did not come up:\n${JSON.stringify(started.output(), null, 2)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const authUrl = `http://localhost:${port}/auth/v1`;
      expect(started.output().stdout).toContain(`edge-auth is running on port ${port}`);
      expect(started.output().stdout).toContain(`auth API      ${authUrl}`);
      const running = JSON.parse(readFileSync(join(cwd, RUNNING_FILE), "utf8")) as {
        port: number;
        auth: string;
      };
      expect(running).toMatchObject({ port, auth: authUrl });
      expect(started.output().stdout).toMatch(
        /start: local databases \(DB, DB_1\) migrated \(\d+ new migrations\)/,
      );

      // The mirror is bound (its password not shown), and a sign-up reaches its Postgres.
      expect(started.output().stdout).toContain(
        `mirror        ${mirrorUrl.replace("not-to-be-shown", "***")}`,
      );
      expect(started.output().stdout).not.toContain("not-to-be-shown");
      const email = `start-${crypto.randomUUID().slice(0, 8)}@example.com`;
      const signUp = await fetch(`${authUrl}/signup/email-password`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password: "correct horse battery" }),
      });
      expect(signUp.status).toBe(200);
      expect(await mirroredWithin(mirrorUrl, email, 20_000)).toBe(true);

      // No --server, AUTH_URL or PORT: the admin CLI finds this server, with the secret of this checkout's .dev.vars.
      const keys = await runFile(process.execPath, [ADMIN, "list-keys", "--json"], { cwd, env: cleanEnv() });
      expect((JSON.parse(keys.stdout) as { items: unknown[] }).items.length).toBeGreaterThan(0);
      // A refused secret names the URL that refused it.
      const refused = await runFile(process.execPath, [ADMIN, "list-keys"], {
        cwd,
        env: cleanEnv({ ADMIN_SECRET: "not-the-secret-of-this-server" }),
      }).then(
        () => null,
        (error: { stderr: string }) => error,
      );
      expect(refused?.stderr).toContain(`GET ${authUrl}/admin/keys: 401`);

      // Users of either database sign up (a database without the tables would answer 500): nine at once, which with
      // the sign-up above is the sign-up limit's burst of ten. One search of the admin CLI then says where each user is.
      const tag = `shards-${crypto.randomUUID().slice(0, 8)}`;
      const statuses = await Promise.all(
        Array.from({ length: 9 }, async (_, i) => {
          const response = await fetch(`${authUrl}/signup/email-password`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ email: `${tag}-${i}@example.com`, password: "correct horse battery" }),
          });
          return response.status;
        }),
      );
      expect(statuses).toEqual(Array(9).fill(200));
      const found = await runFile(process.execPath, [ADMIN, "list-users", "--json", "--search", tag], {
        cwd,
        env: cleanEnv(),
      });
      const users = (JSON.parse(found.stdout) as { items: { id: string }[] }).items;
      expect(users).toHaveLength(9);
      const landed = [0, 1].map((shard) =>
        users.filter((user) => shardOfTwo(user.id) === shard).map((user) => user.id),
      );
      // One run in 256 puts all nine in one database: then the admin CLI (no sign-up limit) adds users until the other
      // has one, so the check never depends on the draw (each try lands there one time in two).
      for (let extra = 0; extra < 30 && !(landed[0]!.length && landed[1]!.length); extra++) {
        const made = await runFile(
          process.execPath,
          [ADMIN, "create-user", "--email", `${tag}-extra-${extra}@example.com`, "--json"],
          { cwd, env: cleanEnv() },
        );
        const { id } = JSON.parse(made.stdout) as { id: string };
        landed[shardOfTwo(id)]!.push(id);
      }
      expect(landed[0]!.length && landed[1]!.length).toBeTruthy();

      started.child.kill("SIGINT");
      await within(started.exited, 20_000, "npm start stopping").catch((error) => {
        stopGroup(started);
        throw error;
      });
      stopGroup(started);
      expect(existsSync(join(cwd, RUNNING_FILE))).toBe(false);
      // Stopped, the CLI falls back to the port of .dev.vars (none here: 8787).
      const help = await runFile(process.execPath, [ADMIN, "--help"], { cwd, env: cleanEnv() });
      expect(help.stdout).toContain("local server of npm start, http://localhost:8787/auth/v1");
      // Each user's row is in the database of their id's slot, and only there. One database at a time: two local
      // `d1 execute` at once failed one run in a few with SQLITE_BUSY_RECOVERY (both open the state directory's files).
      for (const [index, binding] of (["DB", "DB_1"] as const).entries()) {
        const listed = await runFile(
          process.execPath,
          [WRANGLER, "d1", "execute", binding, "--local", "--json", "--command", "SELECT id FROM users"],
          { cwd, env: cleanEnv({ CI: "true" }) },
        );
        const ids = (JSON.parse(listed.stdout) as { results: { id: string }[] }[])[0]!.results.map(
          (r) => r.id,
        );
        expect(ids, binding).toEqual(expect.arrayContaining(landed[index]!));
        for (const id of landed[1 - index]!) expect(ids, binding).not.toContain(id);
      }
      // start applies the migrations itself, not through wrangler: wrangler's own list finds every one applied.
      const listed = await runFile(
        process.execPath,
        [WRANGLER, "d1", "migrations", "list", "DB_1", "--local"],
        {
          cwd,
          env: cleanEnv({ CI: "true" }),
        },
      );
      expect(listed.stdout).toContain("No migrations to apply");
    },
    FIRST_START_MS + 90_000,
  );
});
