// better-auth's own schema for its options, compiled by its own migration code (`better-auth/db/migration`, what its
// CLI's `migrate` runs) against an empty SQLite database: the SQL the bench applies to the peer's D1.
import { DatabaseSync } from "node:sqlite";
import { getMigrations } from "better-auth/db/migration";
import { betterAuthOptions } from "./options.mjs";

export async function betterAuthSchemaSql() {
  const database = new DatabaseSync(":memory:");
  const { compileMigrations } = await getMigrations(
    betterAuthOptions({ database, secret: "x".repeat(32), baseURL: "http://localhost" }),
  );
  const sql = await compileMigrations();
  database.close();
  return sql
    .split(/;\s*\n/)
    .map((statement) => statement.trim().replace(/;$/, ""))
    .filter(Boolean);
}
