// `npm run deploy`: the production deploy (wrangler.toml [env.production]) in one command, refused while it cannot
// work. First the checks (scripts/deploy/checks.mjs: placeholders and example.com URLs, no URL, no AUTH_SERVER_URL,
// a development transport on, no mail transport), one line each. Then, on the logged-in Cloudflare account: every
// resource the configuration names that is missing is created (D1 databases and every shard of AUTH_D1_SHARDS, KV
// namespaces, R2 buckets, queues and their dead-letter queues, the mirror's Hyperdrive when AUTH_MIRROR_DATABASE_URL
// is given), their ids written into [env.production] of wrangler.toml, the image Worker deployed, the D1 migrations
// applied to every shard, the service deployed with every secret not set yet (generated, or from the secrets file),
// and its health endpoints asked. Run again, it changes nothing that exists. `--dry-run` prints the plan and bundles
// both Workers without deploying (what the test suite runs); placeholders do not stop it, it lists them. `--check`
// prints the plan only. The wrangler it runs: --wrangler <path> or EDGE_AUTH_WRANGLER (the tests' recording).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { checkProduction } from "./deploy/checks.mjs";
import { writeIds } from "./deploy/config-file.mjs";
import { checkHealth, healthUrls } from "./deploy/health.mjs";
import {
  accountResources,
  createResources,
  describe,
  desiredResources,
  planResources,
} from "./deploy/resources.mjs";
import {
  deployedSecretNames,
  readSecretsFile,
  secretsPlan,
  secretsToKeep,
  secretValues,
} from "./deploy/secrets-step.mjs";
import { wranglerRunner } from "./deploy/wrangler.mjs";
import { readRawConfig } from "./wrangler-config.mjs";

const DEFAULT_SECRETS_FILE = "production.secrets.json";
const ENV = "production";
const MIRROR_URL_VARIABLE = "AUTH_MIRROR_DATABASE_URL";

let options;
try {
  ({ values: options } = parseArgs({
    options: {
      "dry-run": { type: "boolean", default: false },
      check: { type: "boolean", default: false },
      config: { type: "string", short: "c", default: "wrangler.toml" },
      "images-config": { type: "string", default: "wrangler.images.toml" },
      "secrets-file": { type: "string" },
      wrangler: { type: "string" },
      offline: { type: "boolean", default: false },
      "health-wait": { type: "string", default: "90" },
      outdir: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  }));
} catch (error) {
  console.error(`deploy: ${error.message}`);
  process.exit(2);
}
if (options.help) {
  console.log(`usage: npm run deploy [-- --dry-run | --check] [--secrets-file <file>] [--wrangler <path>]

Checks [env.${ENV}] of wrangler.toml, creates on the logged-in Cloudflare account every resource it names that is
missing and writes their ids into it, deploys the image transformer, applies the D1 migrations (to every database of
AUTH_D1_SHARDS), deploys the service with every secret not set yet (generated, printed once) and asks its health
endpoints. With ${MIRROR_URL_VARIABLE} in the environment it also creates the mirror's Hyperdrive.
--dry-run: the plan, and both Workers bundled; nothing created or uploaded (placeholders are listed, not refused).
--outdir <dir> (with --dry-run): the two bundles are kept there, in images/ and main/, to read.
--check: the plan only. --offline (with --dry-run or --check): the plan from the configuration alone, Cloudflare not
asked (a CI check without credentials). --secrets-file: secrets of your own to upload when not set yet (default ${DEFAULT_SECRETS_FILE}
when it exists). --wrangler (or EDGE_AUTH_WRANGLER): the wrangler to run. --health-wait: seconds to wait for the
health endpoints (default 90).`);
  process.exit(0);
}
const planOnly = options["dry-run"] || options.check;
const healthWait = Number(options["health-wait"]);
if (!Number.isFinite(healthWait) || healthWait < 0) {
  console.error(`deploy: --health-wait ${options["health-wait"]}: a number of seconds`);
  process.exit(2);
}
if (options.outdir !== undefined && !options["dry-run"]) {
  console.error("deploy: --outdir goes with --dry-run: only a dry run keeps its bundles");
  process.exit(2);
}
if (options.offline && !planOnly) {
  console.error("deploy: --offline goes with --dry-run or --check: a deploy needs the account");
  process.exit(2);
}
const wrangler = wranglerRunner(options.wrangler);
const log = (line) => console.log(line);

function refuse(problems) {
  console.error(
    `deploy: refused; ${problems.length} thing(s) to fix first:\n${problems.map((p) => `  - ${p}`).join("\n")}`,
  );
  process.exit(1);
}
/** Runs a step shown to the operator; stops the deploy when it fails. */
function step(args) {
  const done = wrangler(args);
  if (done.status !== 0) {
    console.error(`deploy: \`wrangler ${args.join(" ")}\` failed (above)`);
    process.exit(done.status || 1);
  }
}

let rawConfig;
try {
  ({ rawConfig } = await readRawConfig(options.config));
} catch (error) {
  console.error(`deploy: cannot read ${options.config}: ${error.message}`);
  process.exit(1);
}
const production = rawConfig.env?.[ENV];
if (!production) {
  console.error(`deploy: ${options.config} has no [env.${ENV}]`);
  process.exit(1);
}
const worker = production.name ?? rawConfig.name;
const early = [];

const secretsFile =
  options["secrets-file"] ?? (existsSync(DEFAULT_SECRETS_FILE) ? DEFAULT_SECRETS_FILE : undefined);
let fileValues = null;
if (secretsFile && !existsSync(secretsFile)) early.push(`--secrets-file ${secretsFile}: no such file`);
else if (secretsFile) fileValues = readSecretsFile(secretsFile);

const mirrorUrl = process.env[MIRROR_URL_VARIABLE] || undefined;
if (mirrorUrl && !/^postgres(ql)?:\/\/[^/]+\/[^/]+/.test(mirrorUrl)) {
  early.push(`${MIRROR_URL_VARIABLE} must be postgres://USER:PASSWORD@HOST:PORT/DATABASE`);
}

// Cloudflare is asked only when logged in: a plan without an account is still a plan (the test suite's dry run). The
// first question, the Worker's secrets, tells which: a Worker not found is a first deploy, any other failure is no
// account to ask (wrangler's own message says why).
let deployed = null;
let loggedIn = false;
try {
  if (!options.offline) {
    deployed = deployedSecretNames(wrangler, { config: options.config, env: ENV });
    loggedIn = true;
  }
} catch (error) {
  if (!planOnly)
    early.push(
      `${error.message}\n    Log in first: \`npx wrangler login\` (or CLOUDFLARE_API_TOKEN in the environment)`,
    );
}
const secretNames =
  deployed === null && fileValues === null ? null : [...(deployed ?? []), ...Object.keys(fileValues ?? {})];
const { problems, placeholderProblems, warnings, shards, urls } = checkProduction({
  rawConfig,
  production,
  env: ENV,
  secretNames,
});
problems.unshift(...early);

const secrets = secretsPlan({ required: production.secrets?.required ?? [], deployed, fileValues });
for (const name of secrets.missing) {
  problems.push(
    `secret ${name} is not set (wrangler.toml requires it): \`npx wrangler secret put ${name} --env ${ENV}\`, or add it to ${secretsFile ?? DEFAULT_SECRETS_FILE}`,
  );
}

let planned = desiredResources({ production, worker, shards, mirrorUrl }).map((resource) => ({
  ...resource,
  action: "unknown",
}));
if (loggedIn && problems.length === 0) {
  try {
    const found = accountResources(wrangler, planned);
    const resolved = planResources(planned, found);
    planned = resolved.planned;
    problems.push(...resolved.problems);
    if (!mirrorUrl && planned.some((r) => r.kind === "hyperdrive" && r.action === "create")) {
      problems.push(
        `env.${ENV}.hyperdrive MIRROR_DB has no id and the account no edge-auth-mirror: give the database, ${MIRROR_URL_VARIABLE}=postgres://USER:PASSWORD@HOST:PORT/DATABASE npm run deploy, and it is created`,
      );
    }
  } catch (error) {
    problems.push(error.message);
  }
}

for (const warning of warnings) console.error(`deploy: warning: ${warning}`);
if (options["dry-run"] && problems.length === 0 && placeholderProblems.length > 0) {
  console.error(
    `deploy: dry run with ${placeholderProblems.length} placeholder(s) left, which a real deploy refuses:\n${placeholderProblems.map((p) => `  - ${p}`).join("\n")}`,
  );
} else {
  problems.unshift(...placeholderProblems);
}
if (problems.length > 0) refuse(problems);

const health = healthUrls(production.vars ?? {});
/** One line of the plan per resource: what exists, what is created, where its id goes. */
function planLine(resource) {
  const idGoesIn = resource.kind === "d1" || resource.kind === "kv" || resource.kind === "hyperdrive";
  switch (resource.action) {
    case "keep":
      return `  exists       ${describe(resource)}`;
    case "adopt":
      return `  exists       ${describe(resource)} → its id into ${options.config}`;
    case "create":
      return `  create       ${describe(resource)}${idGoesIn ? ` → its id into ${options.config}` : ""}`;
    default:
      return `  create unless it exists: ${describe(resource)}${resource.declared === false ? ` (added to ${options.config})` : ""}`;
  }
}
const plan = [
  ...planned.map(planLine),
  ...(secrets.alreadySet.length > 0
    ? [`  secrets set already (kept): ${secrets.alreadySet.join(", ")}`]
    : []),
  ...(secrets.fromFile.length > 0 ? [`  secrets from ${secretsFile}: ${secrets.fromFile.join(", ")}`] : []),
  ...(secrets.skipped.length > 0
    ? [
        `  secrets in ${secretsFile} not uploaded, set already: ${secrets.skipped.join(", ")} (to change one: npx wrangler secret put NAME --env ${ENV})`,
      ]
    : []),
  ...(secrets.toGenerate.length > 0
    ? [
        `  secrets generated${deployed === null ? " unless set already" : ""}: ${secrets.toGenerate.join(", ")}`,
      ]
    : []),
  `  deploy the image Worker (${options["images-config"]}), migrate ${shards.join(", ")}, deploy ${worker} (${options.config})`,
  `  ask ${health.join(" and ")}`,
];
log(
  `deploy: the plan${loggedIn ? "" : ` (${options.offline ? "--offline" : "not logged in to Cloudflare"}: what exists is not known)`}:\n${plan.join("\n")}`,
);
if (shards.length > 1) {
  log(`deploy: the D1 migrations go to each of the ${shards.length} databases: ${shards.join(", ")}`);
}
if (options.check) {
  log(
    `deploy: checks passed (--check: nothing bundled or uploaded). It would answer at ${urls.join(" and ")}.`,
  );
  process.exit(0);
}
if (options["dry-run"]) {
  const keptIn = (name) => (options.outdir === undefined ? [] : ["--outdir", join(options.outdir, name)]);
  step([
    "deploy",
    "-c",
    options["images-config"],
    "--env",
    ENV,
    "--minify",
    "--dry-run",
    ...keptIn("images"),
  ]);
  step(["deploy", "-c", options.config, "--env", ENV, "--minify", "--dry-run", ...keptIn("main")]);
  log(
    `deploy: ${placeholderProblems.length > 0 ? `both Workers bundle, with ${placeholderProblems.length} placeholder(s) left (above)` : "checks passed and both Workers bundle"} (dry run). It would answer at ${urls.join(" and ")}.`,
  );
  process.exit(0);
}

try {
  planned = createResources(wrangler, planned, { mirrorUrl, log });
  for (const line of writeIds(options.config, ENV, planned)) log(`deploy: ${options.config}: ${line}`);
} catch (error) {
  console.error(`deploy: ${error.message}`);
  process.exit(1);
}

step(["deploy", "-c", options["images-config"], "--env", ENV, "--minify"]);
// Every shard before the Worker that reads it: the new code never meets a database without its tables.
for (const name of shards)
  step(["d1", "migrations", "apply", name, "--remote", "--env", ENV, "-c", options.config]);

const values = secretValues(secrets, fileValues);
// In a directory of its own (mkdtemp: 700), readable by this user only, removed once the deploy has taken it.
const uploadDir = mkdtempSync(join(tmpdir(), "edge-auth-deploy-"));
const upload = join(uploadDir, "secrets.json");
const uploading = Object.keys(values).length > 0;
if (uploading) writeFileSync(upload, JSON.stringify(values), { mode: 0o600 });
const serviceDeploy = [
  "deploy",
  "-c",
  options.config,
  "--env",
  ENV,
  "--minify",
  ...(uploading ? ["--secrets-file", upload] : []),
];
const deployedService = wrangler(serviceDeploy);
// Removed before anything else, a failed deploy included (process.exit skips a finally).
rmSync(uploadDir, { recursive: true, force: true });
const keep = secretsToKeep(secrets, values);
if (deployedService.status !== 0) {
  // A deploy can fail after its upload (a route, a trigger): then the secrets are set, and the next run would not
  // make new ones, so their values are shown here too.
  console.error(
    `deploy: \`wrangler ${serviceDeploy.join(" ").replace(upload, "<the secrets>")}\` failed (above)${keep.length > 0 ? `. The secrets it was uploading, in case \`npx wrangler secret list --env ${ENV}\` shows them set (if not, the next run makes new ones):\n${keep.join("\n")}` : ""}`,
  );
  process.exit(deployedService.status || 1);
}
if (keep.length > 0) {
  log(`deploy: generated secrets, shown this once (Cloudflare never shows them again); keep them somewhere safe:
${keep.join("\n")}`);
}

const failing = await checkHealth(health, { waitSeconds: healthWait });
if (failing.length > 0) {
  console.error(
    `deploy: deployed, but the health check failed:\n${failing.map((f) => `  - ${f}`).join("\n")}`,
  );
  process.exit(1);
}
log(
  `deploy: done. The service answers at ${urls.join(" and ")} (auth under ${production.vars.AUTH_SERVER_URL}); ${health.join(" and ")} answer "OK".`,
);
