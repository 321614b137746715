// `npm start`: the service on this machine. Development secrets and switches in .dev.vars (generated on the first
// run), the local D1 migrations, then `wrangler dev` with both Workers (the service and the image transformer) and
// local D1, KV, R2 and Durable Objects. PORT (environment, .dev.vars, or `npm start -- --port N`) moves the server and
// every URL built from it. wrangler's own start-up output is kept back unless something fails; once the service
// answers, one block says where everything is.
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { DEV_VARS, ensureDevVars, localPort, localUrls, readDevVars } from "./local.mjs";

const WRANGLER = join(import.meta.dirname, "..", "node_modules", "wrangler", "bin", "wrangler.js");

function fail(message, output = "") {
  if (output) process.stderr.write(output);
  console.error(`start: ${message}`);
  process.exit(1);
}

const added = ensureDevVars();
if (added.length > 0)
  console.log(`start: wrote development secrets and switches to ${DEV_VARS} (${added.length} values)`);
const devVars = readDevVars();
let port;
try {
  port = localPort(process.argv.slice(2), devVars);
} catch (error) {
  fail(error.message);
}
const urls = localUrls(port, devVars);

const migration = spawnSync(process.execPath, [WRANGLER, "d1", "migrations", "apply", "DB", "--local"], {
  encoding: "utf8",
  env: { ...process.env, CI: "true", NO_COLOR: "1" },
});
const migrationOutput = `${migration.stdout ?? ""}${migration.stderr ?? ""}`;
if (migration.status !== 0) fail("applying the local D1 migrations failed (above)", migrationOutput);
const applied = /About to apply (\d+) migration/.exec(migrationOutput)?.[1];
console.log(`start: local database ${applied ? `migrated (${applied} new migrations)` : "up to date"}`);

// The URLs follow the port unless .dev.vars names them itself.
const vars = [
  ...(urls.derived.auth ? ["--var", `AUTH_SERVER_URL:${urls.auth}`] : []),
  ...(urls.derived.storage ? ["--var", `STORAGE_SERVER_URL:${urls.storageServer}`] : []),
];
const child = spawn(
  process.execPath,
  [
    WRANGLER,
    "dev",
    "-c",
    "wrangler.toml",
    "-c",
    "wrangler.images.toml",
    "--port",
    String(port),
    "--show-interactive-dev-session=false",
    ...vars,
  ],
  { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
);

let ready = false;
let heldBack = "";
for (const stream of [child.stdout, child.stderr]) {
  stream.on("data", (chunk) => {
    if (ready) (stream === child.stderr ? process.stderr : process.stdout).write(chunk);
    else heldBack += chunk;
  });
}
child.on("exit", (code) => {
  if (!ready) fail(`wrangler dev stopped before the service answered (exit ${code})`, heldBack);
  process.exit(code ?? 0);
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));

async function answers(url) {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
}

async function about() {
  try {
    return await (await fetch(`${urls.auth}/dev/about`)).json();
  } catch {
    return null;
  }
}

const deadline = Date.now() + 120_000;
while (!(await answers(`${urls.auth}/healthz`))) {
  if (Date.now() > deadline) fail("the service did not answer within two minutes", heldBack);
  await new Promise((resolve) => setTimeout(resolve, 250));
}
const info = await about();
const lines = [
  "",
  `edge-auth is running on port ${port} (local D1, KV, R2 and Durable Objects in .wrangler/state)`,
  `  auth API      ${urls.auth}`,
  `  storage API   ${urls.storage}`,
  `  API reference ${urls.auth}/reference  ·  ${urls.storage}/reference`,
  `  mail inbox    ${urls.auth}/dev/inbox`,
  `  admin console ${urls.auth}/admin/console  (secret: npm run admin -- secret)`,
];
if (info) {
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
lines.push("Logs follow; Ctrl-C stops.", "");
console.log(lines.join("\n"));
ready = true;
