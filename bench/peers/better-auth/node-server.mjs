// The cross-runtime line of `npm run bench`: the same better-auth options on Node (its `toNodeHandler`), over a
// SQLite file through node:sqlite (better-auth's built-in SQLite support), migrated with its own migration code.
// Started by bench/better-auth.mjs as a child process (one Node thread, as workerd serves from one): prints the
// port it listens on, then serves until killed. Usage: node node-server.mjs <sqlite file>
import { createServer } from "node:http";
import { DatabaseSync } from "node:sqlite";
import { betterAuth } from "better-auth";
import { getMigrations } from "better-auth/db/migration";
import { toNodeHandler } from "better-auth/node";
import { BASE_PATH, betterAuthOptions, EXTEND_BASE_PATH } from "./options.mjs";

const database = new DatabaseSync(process.argv[2] ?? ":memory:");
database.exec("PRAGMA journal_mode = WAL");
const common = { database, secret: process.env.BETTER_AUTH_SECRET, baseURL: "http://127.0.0.1" };
const check = betterAuth(betterAuthOptions({ ...common, basePath: BASE_PATH }));
const extend = betterAuth(betterAuthOptions({ ...common, basePath: EXTEND_BASE_PATH, updateAge: 0 }));
await (await getMigrations(check.options)).runMigrations();

const handlers = { check: toNodeHandler(check), extend: toNodeHandler(extend) };
const server = createServer((request, response) => {
  if (request.url.startsWith(`${EXTEND_BASE_PATH}/`)) return handlers.extend(request, response);
  if (request.url.startsWith(`${BASE_PATH}/`)) return handlers.check(request, response);
  response.writeHead(404).end();
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`listening ${server.address().port}\n`));
