// `npm start`: the service on this machine. Development secrets and switches in .dev.vars (generated on the first
// run), the local D1 migrations (of every database AUTH_D1_SHARDS lists: just DB by default), then `wrangler dev`
// with both Workers (the service and the image transformer) and local D1, KV, R2 and Durable Objects. PORT
// (environment, .dev.vars, or `npm start -- --port N`) moves the server and every URL built from it. wrangler's own start-up output is kept back unless something fails; once the service
// answers, one block says where everything is, and .wrangler/ records the server for `npm run admin` until it stops.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { lookup } from "node:dns/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import {
  DEV_VARS,
  ensureDevVars,
  forgetRunning,
  localPort,
  localUrls,
  readDevVars,
  recordRunning,
} from "./local.mjs";
import { applyLocalMigrations } from "./local-migrations.mjs";
import { MIRROR_URL_VARIABLE, mirrorDevConfig, redacted } from "./mirror-binding.mjs";
import { readRawConfig } from "./wrangler-config.mjs";

/**
 * The wrangler dev this start runs: the project's, unless EDGE_AUTH_WRANGLER names another (as `npm run deploy` takes
 * it): test/compat/start-script.test.ts points it at a stand-in whose Worker refuses its settings, which proves how
 * start answers that without a wrangler dev start-up of its own (test/fakes/wrangler-dev.mjs says what it mimics).
 */
const WRANGLER =
  process.env.EDGE_AUTH_WRANGLER ||
  join(import.meta.dirname, "..", "node_modules", "wrangler", "bin", "wrangler.js");
/** Where wrangler dev listens unless told otherwise (its default `ip`). */
const HOST = process.platform === "win32" ? "127.0.0.1" : "localhost";

/** wrangler dev, once started: stopped with this script, whatever stops it. */
let child = null;

function fail(message, output = "") {
  if (child && child.exitCode === null) child.kill();
  if (output) process.stderr.write(output);
  console.error(`start: ${message}`);
  process.exit(1);
}

/**
 * Whether another program holds the port where wrangler would listen: a test server bound to each address of HOST
 * (wrangler's own check would come after its start-up, and a server already there would answer the readiness probe).
 */
async function portTaken(port) {
  const addresses = await lookup(HOST, { all: true }).catch(() => [{ address: "127.0.0.1" }]);
  for (const { address } of addresses) {
    const taken = await new Promise((resolve) => {
      const server = createServer();
      server.once("error", (error) => resolve(error.code === "EADDRINUSE" || error.code === "EACCES"));
      server.listen({ port, host: address, exclusive: true }, () => server.close(() => resolve(false)));
    });
    if (taken) return true;
  }
  return false;
}

const devVars = readDevVars();
let port;
try {
  port = localPort(process.argv.slice(2), devVars);
} catch (error) {
  fail(error.message);
}
if (await portTaken(port)) {
  let free = port + 1;
  while (free <= 65535 && (await portTaken(free))) free++;
  fail(`port ${port} is taken: PORT=${free} npm start`);
}

const added = ensureDevVars();
if (added.length > 0)
  console.log(`start: wrote development secrets and switches to ${DEV_VARS} (${added.length} values)`);
const urls = localUrls(port, readDevVars());

// The Postgres mirror (docs/hasura.md): bound as MIRROR_DB only when a database is named.
const mirrorUrl = process.env[MIRROR_URL_VARIABLE] || readDevVars()[MIRROR_URL_VARIABLE] || null;
let mirror = null;
if (mirrorUrl) {
  try {
    mirror = mirrorDevConfig(process.cwd(), mirrorUrl);
  } catch (error) {
    fail(error.message);
  }
}

// The local D1 databases users are spread over (AUTH_D1_SHARDS, docs/scaling.md "Past one D1 database"): just DB
// unless the environment or .dev.vars lists more, each declared in wrangler.toml as production declares its own.
// Every one gets every migration.
const shardList = process.env.AUTH_D1_SHARDS || readDevVars().AUTH_D1_SHARDS || "DB";
const shards = shardList
  .split(",")
  .map((name) => name.trim())
  .filter(Boolean);
const { rawConfig } = await readRawConfig("wrangler.toml");
const declared = new Set((rawConfig.d1_databases ?? []).map((database) => database.binding));
const undeclared = shards.filter((name) => !declared.has(name));
if (undeclared.length > 0) {
  fail(
    `AUTH_D1_SHARDS names ${undeclared.join(", ")}, not a D1 database of wrangler.toml: add one entry per database, e.g.
  [[d1_databases]]
  binding = "${undeclared[0]}"
  database_name = "edge-auth-${undeclared[0].toLowerCase().replace(/_/g, "-")}"
  database_id = "00000000-0000-0000-0000-${String(shards.indexOf(undeclared[0])).padStart(12, "0")}"
  migrations_dir = "migrations"`,
  );
}
// In this process, every database in one workerd (scripts/local-migrations.mjs): `wrangler d1 migrations apply` started a
// workerd per migration, most of a first start's time.
let applied = 0;
try {
  const done = await applyLocalMigrations({ d1Databases: rawConfig.d1_databases ?? [], bindings: shards });
  for (const names of Object.values(done)) applied += names.length;
} catch (error) {
  fail(`applying the local D1 migrations failed: ${error.message}`);
}
const databases = shards.length > 1 ? `databases (${shards.join(", ")})` : "database";
console.log(`start: local ${databases} ${applied ? `migrated (${applied} new migrations)` : "up to date"}`);

// The URLs follow the port unless .dev.vars names them itself. START_ID tells this start's server from any other
// that might answer on the port (the readiness probe below).
const startId = randomUUID();
const vars = [
  "--var",
  `DEV_START_ID:${startId}`,
  ...(urls.derived.auth ? ["--var", `AUTH_SERVER_URL:${urls.auth}`] : []),
  ...(urls.derived.storage ? ["--var", `STORAGE_SERVER_URL:${urls.storageServer}`] : []),
  // From the environment (wrangler reads .dev.vars itself).
  ...(process.env.AUTH_D1_SHARDS ? ["--var", `AUTH_D1_SHARDS:${shards.join(",")}`] : []),
];
child = spawn(
  process.execPath,
  [
    WRANGLER,
    "dev",
    "-c",
    mirror ? mirror.config : "wrangler.toml",
    "-c",
    "wrangler.images.toml",
    "--port",
    String(port),
    "--show-interactive-dev-session=false",
    ...vars,
  ],
  {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...mirror?.env, WRANGLER_SEND_METRICS: "false" },
  },
);

let ready = false;
let heldBack = "";
for (const stream of [child.stdout, child.stderr]) {
  stream.on("data", (chunk) => {
    if (ready) (stream === child.stderr ? process.stderr : process.stdout).write(chunk);
    else heldBack += chunk;
  });
}
process.on("exit", forgetRunning);
child.on("exit", (code) => {
  forgetRunning();
  if (!ready) fail(`wrangler dev stopped before the service answered (exit ${code})`, heldBack);
  process.exit(code ?? 0);
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));

/** The server on this machine's port, whatever public URL .dev.vars gives it. */
const local = `http://${HOST}:${port}${devVars.AUTH_API_PREFIX || "/auth/v1"}`;

/**
 * Whether the service answering is the one this start launched: its wrangler still runs and /dev/about repeats the
 * START_ID handed to it. Without /dev/about (a development server whose AUTH_SERVER_URL is not on loopback), a
 * healthy answer has to do: the port was free before wrangler started.
 */
async function ours() {
  if (child.exitCode !== null) return null;
  try {
    const about = await fetch(`${local}/dev/about`);
    if (about.ok) {
      const info = await about.json();
      return info?.startId === startId ? info : null;
    }
    if (about.status === 404 && (await fetch(`${local}/healthz`)).ok)
      return child.exitCode === null ? {} : null;
  } catch {}
  return null;
}

/**
 * The configuration the service refused, once it has said so, or null. The Worker reads its settings at its first
 * request (src/config.ts, inside wrangler dev, where this script cannot read them first): a setting it refuses makes
 * every request, the readiness probe's too, log one line `{"level":"error","what":"config","detail":…}`
 * (src/index.ts). Without this, the probe went on for two minutes and then printed that line once per try (~370
 * copies) above "did not answer".
 */
function refusedConfiguration() {
  const logged = /\{"level":"error","what":"config","detail":("(?:[^"\\]|\\.)*")\}/.exec(heldBack);
  if (!logged) return null;
  try {
    return JSON.parse(logged[1]);
  } catch {
    return null;
  }
}

const deadline = Date.now() + 120_000;
let info = await ours();
while (!info) {
  const refused = refusedConfiguration();
  if (refused)
    fail(
      `the service refused its configuration: ${refused}\n` +
        `Fix the setting in ${DEV_VARS} (or wrangler.toml's [vars]) and run npm start again.`,
    );
  if (Date.now() > deadline) fail("the service did not answer within two minutes", heldBack);
  await new Promise((resolve) => setTimeout(resolve, 250));
  info = await ours();
}
const lines = [
  "",
  `edge-auth is running on port ${port} (local D1, KV, R2 and Durable Objects in .wrangler/state)`,
  `  auth API      ${urls.auth}`,
  `  storage API   ${urls.storage}`,
  `  API reference ${urls.auth}/reference  ·  ${urls.storage}/reference`,
  `  mail inbox    ${urls.auth}/dev/inbox`,
  `  admin console ${urls.auth}/admin/console  (secret: npm run admin -- secret)`,
];
if (mirrorUrl) {
  lines.push(
    `  mirror        ${redacted(mirrorUrl)}  (Postgres, MIRROR_DB; rebuild: npm run admin -- mirror-resync)`,
  );
}
if (info.corsOrigins) {
  lines.push(
    `  front-ends    ${info.corsOrigins.join(", ") || "none"} may call the APIs from a browser;`,
    "                add yours to AUTH_CORS_ORIGINS in .dev.vars (comma-separated), then restart",
  );
  if (info.oauth2.enabled) {
    lines.push(
      `  OAuth2 issuer ${info.oauth2.issuer}  (registration: ${info.oauth2.registration}; docs/oauth2.md)`,
      `                MCP hosts and CLIs: ${info.oauth2.discovery}`,
      `                device flow page: ${info.oauth2.devicePage}`,
    );
  }
}
const face = readDevVars();
if (face.AUTH_SUPABASE_API_ENABLED === "true") {
  const origin = new URL(urls.auth).origin;
  const key = (face.AUTH_SUPABASE_PUBLISHABLE_KEYS ?? "").split(",")[0];
  lines.push(`  supabase-js   createClient("${origin}/supabase", "${key}")  (docs/supabase.md)`);
}
lines.push("Logs follow; Ctrl-C stops.", "");
recordRunning({ port, auth: urls.auth, storage: urls.storage, startedAt: new Date().toISOString() });
console.log(lines.join("\n"));
ready = true;
