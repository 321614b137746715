// The local D1 databases' migrations, every database in one workerd: what `wrangler d1 migrations apply <db> --local`
// does, without its price. wrangler starts a workerd of its own for every statement it sends (the table of applied
// migrations, the list, then each migration), so a fresh database cost a workerd start per migration: 47 starts per
// database, about 36 s of a first `npm start` on the quiet 2-core machine and twice that with two databases. Here one
// `getPlatformProxy` (wrangler's own API for bindings in Node) opens every database at the place wrangler dev keeps
// it, and each migration runs as wrangler runs it: its statements, split by wrangler's own splitter, and the row that
// records it in `d1_migrations`, in one batch (all or nothing, per migration). The result is the same database,
// readable by `wrangler d1 migrations list --local` (test/compat/start-script.test.ts proves it), so both tools can be
// used on it in any order.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { getPlatformProxy, unstable_splitSqlQuery } from "wrangler";

/** wrangler's table of applied migrations (`migrations_table`, by default d1_migrations), created as wrangler does. */
const createTable = (table) => `CREATE TABLE IF NOT EXISTS "${table}"(
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  name       TEXT UNIQUE,
  applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
)`;

/**
 * The local id of a D1 database of wrangler.toml, as wrangler's local commands name its storage: the preview id, else
 * the id, else the binding.
 */
const localId = (database) => database.preview_database_id ?? database.database_id ?? database.binding;

/**
 * Applies every migration not applied yet to each database named in `bindings` (each declared in `d1Databases`, a
 * wrangler.toml's list), with storage under `persistTo` as `wrangler dev --persist-to` has it (`.wrangler/state` when
 * not given). Returns, per binding, the names applied now. A failing migration stops there, applied up to the one
 * before, and the error names it.
 */
export async function applyLocalMigrations({
  d1Databases,
  bindings,
  persistTo = ".wrangler/state",
  root = ".",
}) {
  const databases = bindings.map((binding) => {
    const database = d1Databases.find((entry) => entry.binding === binding);
    if (!database) throw new Error(`${binding} is not a D1 database of the configuration`);
    return database;
  });
  // A configuration of the databases alone: the service's own (Durable Objects, queues, a service binding) would
  // start bindings the migrations have no use for, and warn about them.
  const scratch = mkdtempSync(join(tmpdir(), "edge-auth-migrate-"));
  const configPath = join(scratch, "wrangler.json");
  writeFileSync(
    configPath,
    JSON.stringify({
      name: "edge-auth-migrations",
      compatibility_date: "2025-01-01",
      d1_databases: databases.map((database) => ({
        binding: database.binding,
        database_name: database.database_name ?? database.binding,
        database_id: localId(database),
      })),
    }),
  );
  const proxy = await getPlatformProxy({ configPath, persist: { path: resolve(root, persistTo, "v3") } });
  try {
    const applied = {};
    for (const database of databases) {
      const db = proxy.env[database.binding];
      const dir = resolve(root, database.migrations_dir ?? "migrations");
      const table = database.migrations_table ?? "d1_migrations";
      await db.prepare(createTable(table)).run();
      const done = new Set(
        (await db.prepare(`SELECT name FROM "${table}" ORDER BY id`).all()).results.map((row) => row.name),
      );
      applied[database.binding] = [];
      for (const name of readdirSync(dir)
        .filter((file) => file.endsWith(".sql"))
        .sort()) {
        if (done.has(name)) continue;
        const statements = unstable_splitSqlQuery(readFileSync(join(dir, name), "utf8"));
        try {
          await db.batch([
            ...statements.map((statement) => db.prepare(statement)),
            db.prepare(`INSERT INTO "${table}" (name) VALUES (?)`).bind(name),
          ]);
        } catch (error) {
          throw new Error(
            `migration ${name} failed on ${database.binding}: ${error?.cause?.message ?? error?.message}`,
          );
        }
        applied[database.binding].push(name);
      }
    }
    return applied;
  } finally {
    await proxy.dispose();
    rmSync(scratch, { recursive: true, force: true });
  }
}
