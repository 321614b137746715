#!/usr/bin/env node
// A recorded `wrangler` for the deploy's tests (test/tooling/deploy-recorded.test.ts): a Cloudflare account kept in a
// JSON file (FAKE_WRANGLER_STATE), every call appended to it, and each command answering as wrangler 4 does — the
// same command lines, exit codes and output formats (JSON of `d1 list --json`, `kv namespace list`, `secret list`;
// cli-table3 tables of `queues list` and `hyperdrive list`; the `name:` blocks of `r2 bucket list`; the config
// snippets of the create commands), read from node_modules/wrangler/wrangler-dist/cli.js. `scripts/deploy.mjs
// --wrangler test/fakes/wrangler.mjs` runs against it; no network, no account.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const Table = createRequire(import.meta.url)("cli-table3");
const STATE = process.env.FAKE_WRANGLER_STATE;
const state = JSON.parse(readFileSync(STATE, "utf8"));
const argv = process.argv.slice(2);
state.calls.push(argv);
state.next ??= 1;
const save = () => writeFileSync(STATE, JSON.stringify(state, null, 2));
const out = (text) => process.stdout.write(`${text}\n`);
function fail(message) {
  save();
  process.stderr.write(`✘ [ERROR] ${message}\n`);
  process.exit(1);
}
/** An id of the shape the resource has (D1: a UUID; the others: 32 hex digits), distinct within the account. */
function newId(uuid) {
  const hex = (state.next++).toString(16).padStart(32, "0");
  return uuid
    ? `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
    : hex;
}
const option = (name) => {
  const i = argv.indexOf(name);
  if (i >= 0) return argv[i + 1];
  return argv.find((arg) => arg.startsWith(`${name}=`))?.slice(name.length + 1);
};
/** The Worker a config names under --env (enough TOML for the tests' configs: `name` and `secrets.required`). */
function workerOf() {
  const text = readFileSync(option("-c") ?? "wrangler.toml", "utf8");
  const env = option("--env");
  const section = env ? (text.split(`[env.${env}]`)[1] ?? "") : text;
  const name = /^name\s*=\s*"([^"]+)"/m.exec(section)?.[1];
  const required = /^required\s*=\s*\[([^\]]*)\]/m.exec(section)?.[1] ?? "";
  return { name, required: [...required.matchAll(/"([^"]+)"/g)].map((match) => match[1]) };
}
const table = (rows) => {
  const head = rows.length === 0 ? [] : Object.keys(rows[0]);
  const t = new Table({ style: { head: [], border: [] }, head, wordWrap: false });
  t.push(...rows.map((row) => head.map((key) => row[key])));
  return t.toString();
};
const account = state.account;
const [a, b, c, d] = argv;

if (!state.loggedIn) {
  fail(
    "In a non-interactive environment, it's necessary to set a CLOUDFLARE_API_TOKEN environment variable for wrangler to work.",
  );
} else if (a === "d1" && b === "list") {
  out(
    JSON.stringify(
      account.d1.map((db) => ({
        uuid: db.uuid,
        name: db.name,
        created_at: "2026-11-29T00:00:00.000Z",
        version: "production",
        num_tables: 0,
        file_size: 0,
        jurisdiction: null,
      })),
      null,
      2,
    ),
  );
} else if (a === "d1" && b === "create") {
  if (account.d1.some((db) => db.name === c)) fail(`A database with that name already exists [code: 7502]`);
  const uuid = newId(true);
  account.d1.push({ uuid, name: c });
  out(
    `✅ Successfully created DB '${c}' in region WEUR\nCreated your new D1 database.\n\nTo access your new D1 Database in your Worker, add the following snippet to your configuration file:\n[[d1_databases]]\nbinding = "${c.replaceAll("-", "_")}"\ndatabase_name = "${c}"\ndatabase_id = "${uuid}"`,
  );
} else if (a === "d1" && b === "migrations" && c === "apply") {
  state.migrated = [...(state.migrated ?? []), d];
  out(`Migrations to be applied:\n(none)\n✅ No migrations to apply!`);
} else if (a === "kv" && b === "namespace" && c === "list") {
  out(
    JSON.stringify(
      account.kv.map((ns) => ({ id: ns.id, title: ns.title, supports_url_encoding: true })),
      null,
      "  ",
    ),
  );
} else if (a === "kv" && b === "namespace" && c === "create") {
  const title = `${option("--env") ? `${option("--env")}-` : ""}${d}`;
  if (account.kv.some((ns) => ns.title === title))
    fail(`A KV namespace with the title "${title}" already exists.`);
  const id = newId(false);
  account.kv.push({ id, title });
  out(
    `🌀 Creating namespace with title "${title}"\n✨ Success!\nTo access your new KV Namespace in your Worker, add the following snippet to your configuration file:\n[[kv_namespaces]]\nbinding = "${d.replaceAll("-", "_")}"\nid = "${id}"`,
  );
} else if (a === "r2" && b === "bucket" && c === "list") {
  out(
    `Listing buckets...\n${account.r2.map((name) => `name:           ${name}\ncreation_date:  2026-11-29T00:00:00.000Z`).join("\n\n")}`,
  );
} else if (a === "r2" && b === "bucket" && c === "create") {
  if (account.r2.includes(d))
    fail(`The bucket you tried to create already exists, and you own it. [code: 10004]`);
  account.r2.push(d);
  out(`Creating bucket '${d}'...\n✅ Created bucket '${d}' with default storage class of Standard.`);
} else if (a === "queues" && b === "list") {
  const page = Number(option("--page") ?? 1);
  const size = state.queuePageSize ?? 50;
  const rows = account.queues.slice((page - 1) * size, page * size);
  out(
    table(
      rows.map((name, i) => ({
        id: `q${i}`,
        name,
        created_on: "2026-11-29T00:00:00Z",
        modified_on: "2026-11-29T00:00:00Z",
        producers: "0",
        consumers: "0",
      })),
    ),
  );
} else if (a === "queues" && b === "create") {
  if (account.queues.includes(c)) fail(`A queue with name "${c}" already exists. [code: 11009]`);
  account.queues.push(c);
  out(`🌀 Creating queue '${c}'\n✅ Created queue '${c}'`);
} else if (a === "hyperdrive" && b === "list") {
  out(
    `📋 Listing Hyperdrive configs\n${table(account.hyperdrive.map((h) => ({ id: h.id, name: h.name, user: "app", host: "db.acme.dev", port: "5432", scheme: "PostgreSQL", database: "app", caching: '{"disabled":true}', mtls: "", origin_connection_limit: "" })))}`,
  );
} else if (a === "hyperdrive" && b === "create") {
  const id = newId(false);
  account.hyperdrive.push({
    id,
    name: c,
    connection: option("--connection-string"),
    caching: !argv.includes("--caching-disabled"),
  });
  out(
    `🚧 Creating '${c}'\n✅ Created new Hyperdrive PostgreSQL config: ${id}\nTo access your new Hyperdrive Config in your Worker, add the following snippet to your configuration file:\n[[hyperdrive]]\nbinding = "HYPERDRIVE"\nid = "${id}"`,
  );
} else if (a === "secret" && b === "list") {
  const { name } = workerOf();
  const worker = account.workers[name];
  if (!worker)
    fail(
      `Worker "${name}" (env: ${option("--env")}) not found.\n\nIf this is a new Worker, run \`wrangler deploy\` first to create it.`,
    );
  out(
    JSON.stringify(
      worker.secrets.map((secret) => ({ name: secret, type: "secret_text" })),
      null,
      "  ",
    ),
  );
} else if (a === "deploy") {
  const { name, required } = workerOf();
  if (argv.includes("--dry-run")) {
    out("--dry-run: exiting now.");
  } else {
    const worker = account.workers[name] ?? { secrets: [] };
    const file = option("--secrets-file");
    const uploaded = file ? Object.keys(JSON.parse(readFileSync(file, "utf8"))) : [];
    // wrangler refuses a deploy whose required secrets are neither uploaded with it nor set already.
    const lacking = required.filter(
      (secret) => !worker.secrets.includes(secret) && !uploaded.includes(secret),
    );
    if (lacking.length > 0) fail(`The following required secrets have not been set: ${lacking.join(", ")}`);
    // A failure the test asks for: the platform refusing the upload (nothing set).
    if (state.refuseDeployOf === name)
      fail(`A request to the Cloudflare API (/accounts/acc/workers/scripts/${name}) failed.`);
    worker.secrets = [...new Set([...worker.secrets, ...uploaded])];
    state.uploads = [...(state.uploads ?? []), ...uploaded.map((secret) => `${name}:${secret}`)];
    account.workers[name] = worker;
    out(
      `Uploaded ${name} (1.00 sec)\nDeployed ${name} triggers (0.50 sec)\nCurrent Version ID: ${newId(true)}`,
    );
  }
} else {
  fail(`fake wrangler: no recording for \`wrangler ${argv.join(" ")}\``);
}
save();
