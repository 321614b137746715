// `npm run deploy`: the production deploy (wrangler.toml [env.production]), refused while it cannot work. It names every
// placeholder still in the configuration, every production URL still on example.com, a Worker that would get no URL
// (no workers.dev, no route or custom domain), and every required secret that is not set (in production.secrets.json
// or, without that file, on Cloudflare). Then: the image transformer, the D1 migrations, the main Worker, and the URL
// it answers at. `--dry-run` checks and bundles without deploying (what the test suite runs).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { experimental_readRawConfig } from "wrangler";

const WRANGLER = join(import.meta.dirname, "..", "node_modules", "wrangler", "bin", "wrangler.js");
const DEFAULT_SECRETS_FILE = "production.secrets.json";
const ENV = "production";

let options;
try {
  ({ values: options } = parseArgs({
    options: {
      "dry-run": { type: "boolean", default: false },
      config: { type: "string", short: "c", default: "wrangler.toml" },
      "images-config": { type: "string", default: "wrangler.images.toml" },
      "secrets-file": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  }));
} catch (error) {
  console.error(`deploy: ${error.message}`);
  process.exit(2);
}
if (options.help) {
  console.log(`usage: npm run deploy [-- --dry-run] [--secrets-file <file>]

Checks [env.${ENV}] of wrangler.toml, then deploys the image transformer, applies the D1 migrations and deploys the
service. --dry-run: check and bundle only. --secrets-file: the secrets to upload with the deploy (default
${DEFAULT_SECRETS_FILE} when it exists, as \`npm run secrets:production\` writes it).`);
  process.exit(0);
}

const wrangler = (args, capture = false) =>
  spawnSync(process.execPath, [WRANGLER, ...args], {
    encoding: "utf8",
    stdio: capture ? "pipe" : "inherit",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });

/** Every string in the configuration that is still a placeholder, by where it is. */
function placeholders(value, path, found = []) {
  if (typeof value === "string") {
    if (/REPLACE_/.test(value)) found.push(`${path} = "${value}"`);
  } else if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) placeholders(item, `${path}[${i}]`, found);
  } else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) placeholders(item, path ? `${path}.${key}` : key, found);
  }
  return found;
}

/** The secrets a file holds: JSON (`npm run secrets:production`) or NAME=value lines. */
function secretsIn(file) {
  const text = readFileSync(file, "utf8");
  try {
    return Object.keys(JSON.parse(text));
  } catch {
    return text
      .split("\n")
      .map((line) => /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line)?.[1])
      .filter(Boolean);
  }
}

/** The secrets set on the deployed Worker, or null when Cloudflare cannot be asked (not logged in, no Worker yet). */
function deployedSecrets(config) {
  const listed = wrangler(["secret", "list", "--env", ENV, "-c", config, "--format", "json"], true);
  if (listed.status !== 0) return null;
  try {
    return JSON.parse(listed.stdout).map((secret) => secret.name);
  } catch {
    return null;
  }
}

const problems = [];
const { rawConfig } = experimental_readRawConfig({ config: options.config });
const production = rawConfig.env?.[ENV];
if (!production) {
  console.error(`deploy: ${options.config} has no [env.${ENV}]`);
  process.exit(1);
}
for (const found of placeholders(production, `env.${ENV}`)) {
  problems.push(`${found}: replace it with the id the README's commands print`);
}
for (const [name, value] of Object.entries(production.vars ?? {})) {
  if (/^https?:\/\/[^/]*\bexample\.com\b/.test(String(value))) {
    problems.push(`env.${ENV}.vars.${name} = "${value}": still the example domain; set your own URL`);
  }
}
const routes = [...(production.routes ?? []), ...(production.route ? [production.route] : [])];
if (production.workers_dev !== true && routes.length === 0) {
  problems.push(
    `env.${ENV}: the Worker would get no URL. Set workers_dev = true (https://${production.name ?? rawConfig.name}.<your-subdomain>.workers.dev), or add a custom domain: routes = [{ pattern = "auth.your-domain.com", custom_domain = true }]`,
  );
}

const required = production.secrets?.required ?? [];
const secretsFile =
  options["secrets-file"] ?? (existsSync(DEFAULT_SECRETS_FILE) ? DEFAULT_SECRETS_FILE : undefined);
if (options["secrets-file"] && !existsSync(options["secrets-file"])) {
  problems.push(`--secrets-file ${options["secrets-file"]}: no such file`);
} else if (required.length > 0) {
  const have = secretsFile
    ? secretsIn(secretsFile)
    : options["dry-run"]
      ? null
      : deployedSecrets(options.config);
  if (have === null && !options["dry-run"]) {
    problems.push(
      `the secrets ${required.join(", ")} could not be checked on Cloudflare (not logged in, or a first deploy): run \`npm run secrets:production\`, which writes ${DEFAULT_SECRETS_FILE}; this script uploads it with the deploy`,
    );
  }
  for (const name of required) {
    if (have && !have.includes(name)) {
      problems.push(
        `secret ${name} is not set${secretsFile ? ` in ${secretsFile}` : " on the Worker"}: \`npx wrangler secret put ${name} --env ${ENV}\`, or add it to the secrets file`,
      );
    }
  }
}

if (problems.length > 0) {
  console.error(
    `deploy: refused; ${problems.length} thing(s) to fix first:\n${problems.map((p) => `  - ${p}`).join("\n")}`,
  );
  process.exit(1);
}

const dry = options["dry-run"] ? ["--dry-run"] : [];
const steps = [
  ["deploy", "-c", options["images-config"], "--env", ENV, "--minify", ...dry],
  ...(options["dry-run"]
    ? []
    : [["d1", "migrations", "apply", "DB", "--remote", "--env", ENV, "-c", options.config]]),
  [
    "deploy",
    "-c",
    options.config,
    "--env",
    ENV,
    "--minify",
    ...dry,
    ...(secretsFile && !options["dry-run"] ? ["--secrets-file", secretsFile] : []),
  ],
];
for (const step of steps) {
  const done = wrangler(step);
  if (done.status !== 0) {
    console.error(`deploy: \`wrangler ${step.join(" ")}\` failed (above)`);
    process.exit(done.status ?? 1);
  }
}
const urls = [
  ...routes.map(
    (route) => `https://${(typeof route === "string" ? route : route.pattern).replace(/\/\*$/, "")}`,
  ),
  ...(production.workers_dev === true
    ? [`https://${production.name ?? rawConfig.name}.<your-subdomain>.workers.dev`]
    : []),
];
console.log(
  options["dry-run"]
    ? `deploy: checks passed and both Workers bundle (dry run). It would answer at ${urls.join(" and ")}.`
    : `deploy: done. The service answers at ${urls.join(" and ")} (auth under ${production.vars?.AUTH_SERVER_URL ?? "/auth/v1"}); try ${production.vars?.AUTH_SERVER_URL ?? ""}/healthz`,
);
