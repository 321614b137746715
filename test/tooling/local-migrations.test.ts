// scripts/local-migrations.mjs (`npm start`'s migrations, the compat server's) under a failing migration: the
// database keeps every migration before it and nothing of it (one batch each, all or nothing), the error names it,
// and once the file is mended the next run applies only what is left.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs helper shared with `npm start`
import { applyLocalMigrations } from "../../scripts/local-migrations.mjs";

const dir = mkdtempSync(join(tmpdir(), "edge-auth-local-migrations-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("local migrations in one workerd", () => {
  it("a migration that fails leaves nothing of itself; the mended file is applied alone by the next run", async () => {
    const migrations = join(dir, "migrations");
    const apply = () =>
      applyLocalMigrations({
        d1Databases: [{ binding: "DB", database_id: "local-migrations-test", migrations_dir: migrations }],
        bindings: ["DB"],
        persistTo: join(dir, "state"),
      });
    mkdirSync(migrations);
    writeFileSync(join(migrations, "0000_first.sql"), "CREATE TABLE first (id TEXT PRIMARY KEY);\n");
    // Its first statement would succeed alone; the second fails, so the first must not stay either.
    writeFileSync(
      join(migrations, "0001_second.sql"),
      "CREATE TABLE second (id TEXT PRIMARY KEY);\nINSERT INTO no_such_table VALUES (1);\n",
    );
    await expect(apply()).rejects.toThrow(/migration 0001_second\.sql failed on DB: .*no such table/);
    // Mended: were `second` left from the failed batch, creating it again would fail ("already exists").
    writeFileSync(
      join(migrations, "0001_second.sql"),
      "CREATE TABLE second (id TEXT PRIMARY KEY);\nINSERT INTO second VALUES ('1');\n",
    );
    expect(await apply()).toEqual({ DB: ["0001_second.sql"] });
    expect(await apply()).toEqual({ DB: [] });
  }, 120_000);
});
