// A throwaway PostgreSQL server for the tests and the bench that read a Nhost database (issue 29, contract
// move-in.md §1): the real server, so Nhost's own migrations, citext, generated columns and bytea behave as they do
// in a Nhost project, not as a fake thinks they do. Everything lives in one temporary directory (data and socket)
// on a free loopback port: nothing on the machine is read or changed, and `stop()` leaves nothing behind.
// Plain Node, no Vitest, and only erasable TypeScript syntax: `node bench/….mjs` can import it as well.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { chown, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

export interface RunningPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/nhost`: superuser, no password (trust on loopback). */
  url: string;
  stop(): Promise<void>;
}

const MISSING = [
  "PostgreSQL's server programs (initdb, postgres) were not found: looked at `pg_config --bindir`,",
  "/usr/lib/postgresql/*/bin and PATH. Install them: Debian's `postgresql` package",
  "(`apt-get install postgresql`, which .ci/run does when they are missing), or Homebrew's `postgresql`.",
].join(" ");

const hasServer = (dir: string) => existsSync(join(dir, "initdb")) && existsSync(join(dir, "postgres"));

/**
 * The directory holding initdb and postgres. `pg_config` alone is not enough: on Debian it can come from libpq-dev
 * without a server, so the directory must hold the programs. Debian keeps the servers off PATH, one per major version.
 */
export function findPostgresBinaries(): string {
  try {
    const dir = execFileSync("pg_config", ["--bindir"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    if (hasServer(dir.trim())) return dir.trim();
  } catch {
    // no pg_config: look further
  }
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
    for (const version of versions) {
      if (hasServer(join(debian, version, "bin"))) return join(debian, version, "bin");
    }
  }
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir && hasServer(dir)) return dir;
  }
  throw new Error(MISSING);
}

/** Postgres refuses to run as root; as root the server runs as `nobody`, which then must own its directory. */
function unprivilegedUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync("id", [flag, "nobody"], { encoding: "utf8" }).trim());
  return { uid: id("-u"), gid: id("-g") };
}

/**
 * The command line that runs `program` as `user`: setpriv execs in place (the pid we hold is the server's own, so
 * signals reach it directly); runuser forks, so it is only the fallback.
 */
function asUser(
  user: { uid: number; gid: number } | undefined,
  program: string,
  args: string[],
): [string, string[]] {
  if (!user) return [program, args];
  const ids = [`--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups"];
  if (existsSync("/usr/bin/setpriv") || existsSync("/bin/setpriv"))
    return ["setpriv", [...ids, "--", program, ...args]];
  return ["runuser", ["-u", "nobody", "--", program, ...args]];
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Where the compatibility project's one server is (set by its global setup, test/compat/wrangler-dev.ts, to the admin
 * URL of the server it starts for the mirror): there, each `startPostgres()` is a fresh database of that server instead
 * of a server of its own, so the project starts Postgres once, not once per file.
 */
export const SHARED_POSTGRES = "EDGE_AUTH_TEST_POSTGRES";

/**
 * Starts a fresh server with an empty `nhost` database; a few seconds, most of it initdb. Under the compatibility
 * project, an empty database of its shared server (SHARED_POSTGRES), dropped by `stop()`: just as empty and as alone.
 */
export async function startPostgres(): Promise<RunningPostgres> {
  const shared = process.env[SHARED_POSTGRES];
  if (shared) return freshDatabase(shared);
  const bin = findPostgresBinaries();
  const user = unprivilegedUser();
  // As root, under /tmp: $TMPDIR may sit in a home directory `nobody` cannot enter.
  const dir = await mkdtemp(join(user ? "/tmp" : tmpdir(), "edge-auth-pg-"));
  let server: ChildProcess | undefined;
  // A test run that dies before stop() must not leave a server running: the exit handler is synchronous.
  const onExit = () => {
    server?.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", onExit);
  try {
    if (user) await chown(dir, user.uid, user.gid);
    const data = join(dir, "data");
    const [initdb, initArgs] = asUser(user, join(bin, "initdb"), [
      ...["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8"],
      // No locale: the C collation is the same on every machine (and needs no generated locales); --no-sync
      // because the data is thrown away.
      ...["--no-locale", "--no-sync"],
    ]);
    try {
      execFileSync(initdb, initArgs, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    } catch (error) {
      const { stderr, stdout } = error as { stderr?: Buffer; stdout?: Buffer };
      throw new Error(`initdb failed: ${stderr?.toString() ?? ""}${stdout?.toString() ?? ""}`);
    }
    // A free port can be taken between our check and the server's bind: try another one.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const started = await launch(bin, user, dir, data, port);
      if ("server" in started) {
        server = started.server;
        const url = `postgres://postgres@127.0.0.1:${port}/nhost`;
        await adminQuery(port, "CREATE DATABASE nhost");
        return { url, stop: () => stop(server!, dir, onExit) };
      }
      if (attempt === 3 || !/could not bind|address already in use/i.test(started.log)) {
        throw new Error(`postgres did not start:\n${started.log}`);
      }
    }
  } catch (error) {
    onExit();
    process.off("exit", onExit);
    throw error;
  }
}

async function launch(
  bin: string,
  user: { uid: number; gid: number } | undefined,
  dir: string,
  data: string,
  port: number,
): Promise<{ server: ChildProcess } | { log: string }> {
  const [program, args] = asUser(user, join(bin, "postgres"), [
    ...["-D", data, "-p", String(port)],
    // Loopback TCP only; the unix socket goes in our directory, not in /var/run/postgresql.
    ...["-c", "listen_addresses=127.0.0.1", "-c", `unix_socket_directories=${dir}`],
    // Durability is pointless for a throwaway database, and costs most of the time of a migration run.
    ...["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
  ]);
  const child = spawn(program, args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-20_000);
  });
  let exited = false;
  child.on("exit", () => {
    exited = true;
  });
  child.on("error", (error) => {
    exited = true;
    log += String(error);
  });
  const deadline = Date.now() + 30_000;
  while (!exited && Date.now() < deadline) {
    try {
      await adminQuery(port, "SELECT 1");
      return { server: child };
    } catch {
      await sleep(50);
    }
  }
  child.kill("SIGKILL");
  return { log: exited ? log : `${log}\n(no connection within 30 s)` };
}

/** An empty database of its own on the server at `adminUrl`; `stop()` drops it, whoever is still connected. */
async function freshDatabase(adminUrl: string): Promise<RunningPostgres> {
  const name = `nhost_${Math.random().toString(36).slice(2, 12)}`;
  const query = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), stop: () => query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

async function adminQuery(port: number, sql: string): Promise<void> {
  const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" });
  // A refused connection emits "error" on the client as well as rejecting connect(): keep it from crashing the run.
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query(sql);
  } finally {
    await client.end().catch(() => {});
  }
}

async function stop(server: ChildProcess, dir: string, onExit: () => void): Promise<void> {
  if (server.exitCode === null && server.signalCode === null) {
    const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()));
    // SIGINT is Postgres's "fast" shutdown: it ends the sessions and is gone in milliseconds.
    server.kill("SIGINT");
    const timeout = sleep(10_000).then(() => server.kill("SIGKILL"));
    await Promise.race([exited, timeout]);
    await exited;
  }
  process.off("exit", onExit);
  await rm(dir, { recursive: true, force: true });
}

const FIXTURES = fileURLToPath(new URL("../fixtures/nhost/", import.meta.url));

/**
 * What a Nhost project's database holds before Nhost Auth and Nhost Storage run their migrations, and which the
 * migrations take for granted (test/fixtures/nhost/SOURCE.md):
 * - the schemas `auth` and `storage`: Nhost's platform creates them; golang-migrate, which the services run their
 *   migrations with, only creates its own table in them;
 * - that table, `<schema>.schema_migrations`, which golang-migrate creates before the first migration and 00005
 *   comments on;
 * - pgcrypto and citext in `public`: auth 00001 creates them itself (a superuser here), but storage 000001 calls
 *   `public.gen_random_uuid()`, pgcrypto's, so they come first and the storage migrations do not depend on
 *   running after the auth ones.
 */
const PREREQUISITES = `
  CREATE EXTENSION IF NOT EXISTS citext WITH SCHEMA public;
  CREATE EXTENSION IF NOT EXISTS pgcrypto WITH SCHEMA public;
  CREATE SCHEMA IF NOT EXISTS auth;
  CREATE SCHEMA IF NOT EXISTS storage;
  CREATE TABLE IF NOT EXISTS auth.schema_migrations (version bigint NOT NULL PRIMARY KEY, dirty boolean NOT NULL);
  CREATE TABLE IF NOT EXISTS storage.schema_migrations (version bigint NOT NULL PRIMARY KEY, dirty boolean NOT NULL);
`;

/** The `up` files of one service, in the order golang-migrate runs them (by their number). */
async function migrations(service: "auth" | "storage"): Promise<{ version: number; sql: string }[]> {
  const dir = join(FIXTURES, service);
  const files = (await readdir(dir)).filter((f) => f.endsWith(".up.sql"));
  const numbered = files.map((file) => ({ file, version: Number.parseInt(file, 10) }));
  numbered.sort((a, b) => a.version - b.version);
  return Promise.all(
    numbered.map(async ({ file, version }) => ({ version, sql: await readFile(join(dir, file), "utf8") })),
  );
}

/**
 * Applies Nhost's schema (auth 00001–00020, storage 000001–000005) to the database at `url`, as Nhost's services
 * would: each file in one simple query (they hold their own BEGIN/COMMIT), the version recorded as golang-migrate
 * records it (one row, `dirty` false), so the importer sees what a real project's tables say.
 */
export async function loadNhostSchema(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(PREREQUISITES);
    for (const service of ["auth", "storage"] as const) {
      for (const { version, sql } of await migrations(service)) {
        try {
          await client.query(sql);
        } catch (error) {
          throw new Error(`Nhost ${service} migration ${version} failed: ${(error as Error).message}`);
        }
        await client.query(`TRUNCATE ${service}.schema_migrations`);
        await client.query(`INSERT INTO ${service}.schema_migrations (version, dirty) VALUES ($1, false)`, [
          version,
        ]);
      }
    }
  } finally {
    await client.end();
  }
}

const SUPABASE_AUTH = fileURLToPath(new URL("../fixtures/supabase/auth/", import.meta.url));

/**
 * What a Supabase project's database holds before GoTrue migrates it (test/fixtures/supabase/SOURCE.md): the `auth`
 * schema and the roles Supabase's Postgres image creates (the migrations grant to `postgres`; GoTrue connects as
 * `supabase_auth_admin`), and pgcrypto, whose `gen_random_uuid()` the identities' and one-time tokens' ids default to.
 */
const SUPABASE_PREREQUISITES = `
  DO $$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'supabase_auth_admin') THEN
      CREATE ROLE supabase_auth_admin NOINHERIT CREATEROLE LOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'anon') THEN CREATE ROLE anon NOLOGIN NOINHERIT; END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'authenticated') THEN
      CREATE ROLE authenticated NOLOGIN NOINHERIT;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'service_role') THEN
      CREATE ROLE service_role NOLOGIN NOINHERIT BYPASSRLS;
    END IF;
  END $$;
  CREATE EXTENSION IF NOT EXISTS pgcrypto WITH SCHEMA public;
  CREATE SCHEMA IF NOT EXISTS auth AUTHORIZATION supabase_auth_admin;
`;

/**
 * A GoTrue migration as its migrator runs it: pop renders each file as a Go template with the connection's options,
 * and the only one the files use is `{{ index .Options "Namespace" }}` (cmd/migrate_cmd.go sets it from
 * `DB_NAMESPACE`, `auth` on Supabase).
 */
export function renderGoTrueMigration(sql: string, namespace = "auth"): string {
  return sql.replace(/\{\{\s*index \.Options "Namespace"\s*\}\}/g, namespace);
}

/**
 * Applies Supabase Auth's schema (its `migrations/*.up.sql`, in file-name order as pop sorts them by version) to the
 * database at `url`, each version recorded in `auth.schema_migrations` as pop records it.
 */
export async function loadSupabaseSchema(url: string): Promise<void> {
  const files = (await readdir(SUPABASE_AUTH)).filter((f) => f.endsWith(".up.sql")).sort();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(SUPABASE_PREREQUISITES);
    await client.query("SET search_path TO auth, public");
    for (const file of files) {
      const sql = renderGoTrueMigration(await readFile(join(SUPABASE_AUTH, file), "utf8"));
      try {
        await client.query(sql);
      } catch (error) {
        throw new Error(`GoTrue migration ${file} failed: ${(error as Error).message}`);
      }
      await client.query("INSERT INTO auth.schema_migrations (version) VALUES ($1) ON CONFLICT DO NOTHING", [
        file.split("_")[0],
      ]);
    }
  } finally {
    await client.end();
  }
}

const SUPABASE_STORAGE = fileURLToPath(new URL("../fixtures/supabase/storage/", import.meta.url));

/**
 * Applies Supabase Storage's schema (its `migrations/tenant/*.sql`, test/fixtures/supabase/SOURCE.md) to the database
 * at `url`, after loadSupabaseSchema, as Storage's migrator runs them (src/internal/database/migrations/migrate.ts and
 * the postgres-migrations library it drives): in the order of their number, the roles named in `storage.*` settings,
 * each file in a transaction with its row in `storage.migrations` (id, name, sha1 of file name and contents), except
 * `-- postgres-migrations ignore` (recorded, not run) and `disable-transaction` (run outside one). A loaded database
 * takes about a second more.
 */
export async function loadSupabaseStorageSchema(url: string): Promise<void> {
  const files = (await readdir(SUPABASE_STORAGE)).filter((f) => f.endsWith(".sql"));
  const numbered = files.map((file) => ({ file, id: Number.parseInt(file, 10) })).sort((a, b) => a.id - b.id);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // The migrator creates the schema, and postgres-migrations its bookkeeping table (its bundled migration 0).
    await client.query(`CREATE SCHEMA IF NOT EXISTS storage;
      CREATE TABLE IF NOT EXISTS storage.migrations (id integer PRIMARY KEY, name varchar(100) UNIQUE NOT NULL,
        hash varchar(40) NOT NULL, executed_at timestamp DEFAULT current_timestamp)`);
    await client.query("SET search_path TO storage, public, extensions");
    await client.query(`SELECT
      set_config('storage.install_roles', 'true', false),
      set_config('storage.multitenant', 'false', false),
      set_config('storage.anon_role', 'anon', false),
      set_config('storage.authenticated_role', 'authenticated', false),
      set_config('storage.service_role', 'service_role', false),
      set_config('storage.super_user', 'supabase_storage_admin', false)`);
    for (const { file, id } of numbered) {
      const contents = await readFile(join(SUPABASE_STORAGE, file), "utf8");
      const sql = contents.includes("-- postgres-migrations ignore") ? "SELECT 1;" : contents;
      const inTransaction = !contents.includes("-- postgres-migrations disable-transaction");
      const name = file.replace(/^\d+[-_]/, "").replace(/\.sql$/, "");
      const hash = createHash("sha1")
        .update(file + contents, "utf8")
        .digest("hex");
      try {
        if (inTransaction) await client.query("BEGIN");
        await client.query(sql);
        await client.query("INSERT INTO storage.migrations (id, name, hash) VALUES ($1, $2, $3)", [
          id,
          name,
          hash,
        ]);
        if (inTransaction) await client.query("COMMIT");
      } catch (error) {
        if (inTransaction) await client.query("ROLLBACK").catch(() => {});
        throw new Error(`Storage migration ${file} failed: ${(error as Error).message}`);
      }
    }
  } finally {
    await client.end();
  }
}
