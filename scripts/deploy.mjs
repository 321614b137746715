// `npm run deploy`: the production deploy (wrangler.toml [env.production]), refused while it cannot work. It names every
// placeholder still in the configuration, every production URL still on example.com, a Worker that would get no URL
// (no workers.dev, no route or custom domain), every required secret that is not set (in production.secrets.json
// or, without that file, on Cloudflare), and a service that must send mail with no way to (no SMTP host, no EMAIL
// binding: the first sign-up would answer 500). It warns when AUTH_SERVER_URL is on a host the Worker does not answer
// at. Then: the image transformer, the D1 migrations (on every database of AUTH_D1_SHARDS), the main Worker, and the
// URL it answers at. `--dry-run` checks and bundles without deploying (what the test suite runs); placeholders do not
// stop it, it lists them.
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
      check: { type: "boolean", default: false },
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
  console.log(`usage: npm run deploy [-- --dry-run | --check] [--secrets-file <file>]

Checks [env.${ENV}] of wrangler.toml, then deploys the image transformer, applies the D1 migrations (to every database
of AUTH_D1_SHARDS) and deploys the service. --dry-run: check and bundle only (placeholder ids and URLs are listed, not refused). --check: the checks a
real deploy makes, nothing bundled or uploaded. --secrets-file: the secrets to upload with the deploy (default
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

/** A boolean variable as config.ts reads it ("true"/"1", "false"/"0"; unset: the default). */
function switchOn(value, fallback) {
  if (value === undefined || value === "") return fallback;
  return String(value) === "true" || String(value) === "1";
}

/** The host a route pattern serves (`auth.acme.dev/*`, `{ pattern = "auth.acme.dev", custom_domain = true }`). */
const routeHost = (route) => (typeof route === "string" ? route : route.pattern).replace(/\/.*$/, "");

/** Whether a route's host pattern (`*.acme.dev` matches one or more labels) covers `host`. */
function routeCovers(pattern, host) {
  if (!pattern.includes("*")) return pattern.toLowerCase() === host;
  const regex = pattern
    .toLowerCase()
    .replace(/[.+?^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*");
  return new RegExp(`^${regex}$`).test(host);
}

/** Things that stop a deploy. `placeholder`: a value still to fill in, which a dry run lists and bundles anyway. */
const problems = [];
const placeholderProblems = [];
const warnings = [];
const { rawConfig } = experimental_readRawConfig({ config: options.config });
const production = rawConfig.env?.[ENV];
if (!production) {
  console.error(`deploy: ${options.config} has no [env.${ENV}]`);
  process.exit(1);
}
for (const found of placeholders(production, `env.${ENV}`)) {
  placeholderProblems.push(`${found}: replace it with the id the README's commands print`);
}
const onExampleDomain = (value) => /^https?:\/\/[^/]*\bexample\.com\b/.test(String(value));
for (const [name, value] of Object.entries(production.vars ?? {})) {
  if (onExampleDomain(value)) {
    placeholderProblems.push(
      `env.${ENV}.vars.${name} = "${value}": still the example domain; set your own URL`,
    );
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
/** The production secrets' names, as far as they can be known: the secrets file, else Cloudflare; null: unknown. */
let secretsChecked = null;
if (options["secrets-file"] && !existsSync(options["secrets-file"])) {
  problems.push(`--secrets-file ${options["secrets-file"]}: no such file`);
} else {
  const have = secretsFile
    ? secretsIn(secretsFile)
    : options["dry-run"]
      ? null
      : deployedSecrets(options.config);
  secretsChecked = have;
  if (have === null && !options["dry-run"] && required.length > 0) {
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

// Mail (src/mail/create-mailer.ts): SMTP when AUTH_SMTP_HOST is set, else Cloudflare Email Service through the
// send_email binding named EMAIL; with neither, every mail is a 500. Sign-up mails a verification link unless
// AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED is off, and magic links and email codes are mail too.
const vars = production.vars ?? {};
/** Whether a value is set in [env.production.vars] or among the secrets: true, false, or null (cannot be known). */
const configured = (name) =>
  vars[name] !== undefined && vars[name] !== ""
    ? true
    : secretsChecked === null
      ? null
      : secretsChecked.includes(name);
const mailSwitches = [
  ["AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED", true],
  ["AUTH_EMAIL_PASSWORDLESS_ENABLED", false],
  ["AUTH_OTP_EMAIL_ENABLED", false],
].filter(([name, fallback]) => switchOn(vars[name], fallback));
const emailBinding = (production.send_email ?? []).some((binding) => binding.name === "EMAIL");
const smtpHost = configured("AUTH_SMTP_HOST");
if (mailSwitches.length > 0 && !emailBinding && smtpHost !== true) {
  const why = `${mailSwitches.map(([name]) => name).join(", ")} ${mailSwitches.length > 1 ? "are" : "is"} on, so the service sends mail (the first sign-up would answer 500 without a way to)`;
  const fix = `add a transport to [env.${ENV}]: Cloudflare Email Service,
      [[env.${ENV}.send_email]]
      name = "EMAIL"
    with AUTH_SMTP_SENDER = "Your app <noreply@your-domain.com>" in [env.${ENV}.vars] (README "Mail"), or SMTP: AUTH_SMTP_HOST (and AUTH_SMTP_PORT, AUTH_SMTP_USER, AUTH_SMTP_SENDER) in [env.${ENV}.vars] with the password as a secret (AUTH_SMTP_PASS). No mail at all: AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED = "false"`;
  if (smtpHost === false) problems.push(`no mail transport: ${why}. To fix, ${fix}`);
  else
    warnings.push(
      `no EMAIL binding and no AUTH_SMTP_HOST in [env.${ENV}.vars]; it may be a secret on Cloudflare, which a dry run without --secrets-file does not check. ${why}`,
    );
}
if ((emailBinding || smtpHost === true) && configured("AUTH_SMTP_SENDER") === false) {
  problems.push(
    `AUTH_SMTP_SENDER is not set: every mail transport sends from it, and without it the service answers every request with 500. Add AUTH_SMTP_SENDER = "Your app <noreply@your-domain.com>" to [env.${ENV}.vars]`,
  );
}

// The D1 databases users are spread over (AUTH_D1_SHARDS, docs/scaling.md "Past one D1 database"): each holds the
// same tables, so each gets every migration, DB (the home database) first. One, DB, unless the list says more; each
// named binding needs its own [[env.production.d1_databases]] entry (wrangler.toml shows one).
const shards = String(vars.AUTH_D1_SHARDS ?? "DB")
  .split(",")
  .map((name) => name.trim())
  .filter(Boolean);
const databases = new Set((production.d1_databases ?? []).map((database) => database.binding));
if (shards[0] !== "DB") {
  problems.push(
    `env.${ENV}.vars.AUTH_D1_SHARDS = "${vars.AUTH_D1_SHARDS}": the first database must be DB, the home database`,
  );
}
for (const name of new Set(shards)) {
  if (!databases.has(name)) {
    problems.push(
      `env.${ENV}.vars.AUTH_D1_SHARDS names ${name}, which is not a D1 database of [env.${ENV}]: create it (\`npx wrangler d1 create\`) and add
      [[env.${ENV}.d1_databases]]
      binding = "${name}"
      database_name = "…"
      database_id = "<the id it printed>"
      migrations_dir = "migrations"`,
    );
  }
}
if (new Set(shards).size !== shards.length) {
  problems.push(`env.${ENV}.vars.AUTH_D1_SHARDS = "${vars.AUTH_D1_SHARDS}": a database is named twice`);
}

// The issuer of every token and the base of every mailed link: a host this Worker does not answer at breaks both.
const serverUrl = vars.AUTH_SERVER_URL;
if (serverUrl && !onExampleDomain(serverUrl) && !/REPLACE_/.test(serverUrl)) {
  let host = null;
  try {
    host = new URL(serverUrl).hostname.toLowerCase();
  } catch {
    problems.push(`env.${ENV}.vars.AUTH_SERVER_URL = "${serverUrl}": not a URL`);
  }
  const name = String(production.name ?? rawConfig.name).toLowerCase();
  const workersDev =
    production.workers_dev === true && host?.startsWith(`${name}.`) && host.endsWith(".workers.dev");
  const routed = routes.some((route) => routeCovers(routeHost(route), host));
  if (host && !workersDev && !routed) {
    const answersAt = [
      ...(production.workers_dev === true ? [`${name}.<your-subdomain>.workers.dev`] : []),
      ...routes.map(routeHost),
    ];
    warnings.push(
      `AUTH_SERVER_URL (${serverUrl}) is on ${host}, but the Worker answers at ${answersAt.join(" and ") || "no URL"}: tokens would name an issuer, and mails links to, a host that may not reach it. Set AUTH_SERVER_URL to https://<one of those>/auth/v1, or add ${host} to routes`,
    );
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
if (problems.length > 0) {
  console.error(
    `deploy: refused; ${problems.length} thing(s) to fix first:\n${problems.map((p) => `  - ${p}`).join("\n")}`,
  );
  process.exit(1);
}

const urls = [
  ...routes.map(
    (route) => `https://${(typeof route === "string" ? route : route.pattern).replace(/\/\*$/, "")}`,
  ),
  ...(production.workers_dev === true
    ? [`https://${production.name ?? rawConfig.name}.<your-subdomain>.workers.dev`]
    : []),
];
if (shards.length > 1) {
  console.log(`deploy: the D1 migrations go to each of the ${shards.length} databases: ${shards.join(", ")}`);
}
if (options.check) {
  console.log(
    `deploy: checks passed (--check: nothing bundled or uploaded). It would answer at ${urls.join(" and ")}.`,
  );
  process.exit(0);
}

const dry = options["dry-run"] ? ["--dry-run"] : [];
const steps = [
  ["deploy", "-c", options["images-config"], "--env", ENV, "--minify", ...dry],
  // Every shard before the Worker that reads it: the new code never meets a database without its tables.
  ...(options["dry-run"]
    ? []
    : shards.map((name) => [
        "d1",
        "migrations",
        "apply",
        name,
        "--remote",
        "--env",
        ENV,
        "-c",
        options.config,
      ])),
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
console.log(
  options["dry-run"]
    ? `deploy: ${placeholderProblems.length > 0 ? `both Workers bundle, with ${placeholderProblems.length} placeholder(s) left (above)` : "checks passed and both Workers bundle"} (dry run). It would answer at ${urls.join(" and ")}.`
    : `deploy: done. The service answers at ${urls.join(" and ")} (auth under ${production.vars?.AUTH_SERVER_URL ?? "/auth/v1"}); try ${production.vars?.AUTH_SERVER_URL ?? ""}/healthz`,
);
