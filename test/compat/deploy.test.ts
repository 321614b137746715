// The deploy path of the README, checked without a Cloudflare account: both Workers bundle for production, every
// binding the code uses is declared there, no production variable points at localhost, and the generated Env type
// matches wrangler.toml. Each bundle is seconds of CPU on a machine the whole suite shares: the production bundles
// are made once, by `npm run deploy -- --dry-run` (what a user runs) on wrangler.toml as cloned; every other case
// is the deploy's checks alone (`--check`).
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const WRANGLER = join(process.cwd(), "node_modules", "wrangler", "bin", "wrangler.js");
const out = mkdtempSync(join(tmpdir(), "edge-auth-deploy-"));
// Never the developer's Cloudflare login: `npm run deploy` asks the account when it can, and these checks must read
// the same with or without one (test/tooling/deploy-recorded.test.ts proves the account's side with a recording).
const {
  CLOUDFLARE_API_TOKEN: _token,
  CLOUDFLARE_ACCOUNT_ID: _account,
  CLOUDFLARE_API_KEY: _key,
  ...inherited
} = process.env;
const env = {
  ...inherited,
  HOME: out,
  XDG_CONFIG_HOME: out,
  WRANGLER_SEND_METRICS: "false",
  NO_COLOR: "1",
  CI: "true",
};
afterAll(() => rmSync(out, { recursive: true, force: true }));

const wrangler = (...args: string[]) =>
  run(process.execPath, [WRANGLER, ...args], { env, maxBuffer: 1 << 24 });

describe("the production deploy path", () => {
  it("has an Env type generated from the current wrangler.toml (npm run cf-typegen)", async () => {
    const { stdout } = await wrangler(
      "types",
      "-c",
      "wrangler.toml",
      "-c",
      "wrangler.images.toml",
      "--include-runtime=false",
      "--strict-vars=false",
      "--env-file",
      "/dev/null",
      "--check",
    );
    expect(stdout).toContain("up to date");
  }, 120_000);
});

/** `npm run deploy` (scripts/deploy.mjs) with a configuration and secrets file of the test's own, as a dry run. */
async function deploy(
  config: string,
  secrets?: Record<string, string>,
  { dryRun = true, checkOnly = false, outdir = "" } = {},
) {
  const name = `wrangler.deploy-check-${crypto.randomUUID().slice(0, 8)}`;
  // Beside wrangler.toml, so that its relative paths (main, migrations_dir) mean the same.
  const configPath = `${name}.toml`;
  const secretsPath = join(out, `${name}.secrets.json`);
  writeFileSync(configPath, config);
  if (secrets) writeFileSync(secretsPath, JSON.stringify(secrets));
  try {
    const args = [
      "scripts/deploy.mjs",
      // --offline: the plan without asking Cloudflare (no wrangler process for the account's side).
      ...(checkOnly
        ? ["--check", "--offline"]
        : dryRun
          ? ["--dry-run", "--offline"]
          : // A real deploy, for a refusal only: not logged in (HOME is the test's), it is refused before anything
            // is created; were it let through, its first deploy step would find no configuration and stop there.
            ["--images-config", join(out, "no-such-wrangler.images.toml")]),
      ...(outdir ? ["--outdir", outdir] : []),
      "-c",
      configPath,
      ...(secrets ? ["--secrets-file", secretsPath] : []),
    ];
    return await run(process.execPath, args, { env, maxBuffer: 1 << 24 }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
  } finally {
    rmSync(configPath, { force: true });
  }
}

/** Adds lines to [env.production.vars]. */
const withVars = (toml: string, vars: Record<string, string>) =>
  toml.replace(
    "[env.production.vars]\n",
    `[env.production.vars]\n${Object.entries(vars)
      .map(([name, value]) => `${name} = ${JSON.stringify(value)}\n`)
      .join("")}`,
  );
/** Cloudflare Email Service for production, as the refusal's message says to add it. */
const withEmailBinding = (toml: string) =>
  `${withVars(toml, { AUTH_SMTP_SENDER: "Acme <noreply@acme.dev>" })}\n[[env.production.send_email]]\nname = "EMAIL"\n`;

const TOML = readFileSync("wrangler.toml", "utf8");
/** wrangler.toml as a user has it after following the README: ids and URLs of their own, no mail transport yet. */
const FILLED_WITHOUT_MAIL = TOML.replace(/REPLACE_WITH_[A-Za-z0-9_]+/g, "0123456789abcdef0123456789abcdef")
  .replace(/https:\/\/auth\.example\.com/g, "https://edge-auth.acme.workers.dev")
  .replace(/https:\/\/app\.example\.com/g, "https://app.acme.dev");
/** …and mail through Cloudflare Email Service. */
const FILLED = withEmailBinding(FILLED_WITHOUT_MAIL);
const SECRETS = { AUTH_JWT_PRIVATE_KEYS: "[]", AUTH_ENCRYPTION_KEY: "00", AUTH_ADMIN_SECRET: "x" };
/** What a deploy cannot fill in itself; the resource ids (REPLACE_… in wrangler.toml) it creates and writes. */
const PLACEHOLDERS = ["vars.AUTH_SERVER_URL", "vars.AUTH_CLIENT_URL", "vars.STORAGE_SERVER_URL"];

describe("npm run deploy refuses what cannot work, naming each thing to fix", () => {
  it("refuses to deploy the repository's wrangler.toml as it is: every example URL is named, the ids are not (the deploy creates them)", async () => {
    const refused = await deploy(TOML, SECRETS, { dryRun: false });
    expect(refused.code).toBe(1);
    for (const name of PLACEHOLDERS) expect(refused.stderr, name).toContain(`env.production.${name}`);
    expect(refused.stderr).not.toContain("database_id");
    // Without a Cloudflare login a real deploy cannot start, and says how to log in.
    expect(refused.stderr).toContain("Log in first: `npx wrangler login`");
    expect(refused.stderr).not.toContain("no-such-wrangler.images.toml");
  }, 60_000);

  it("refuses a Worker that would get no URL, and a required secret it cannot make; plans the ones it makes", async () => {
    const noUrl = await deploy(FILLED.replace("workers_dev = true", "workers_dev = false"), SECRETS, {
      checkOnly: true,
    });
    expect(noUrl.code).toBe(1);
    expect(noUrl.stderr).toContain("the Worker would get no URL");
    const { AUTH_ADMIN_SECRET: _left, ...withoutAdmin } = SECRETS;
    const ownSecret = FILLED.replace(
      'required = ["AUTH_JWT_PRIVATE_KEYS", "AUTH_ENCRYPTION_KEY", "AUTH_ADMIN_SECRET"]',
      'required = ["AUTH_JWT_PRIVATE_KEYS", "AUTH_ENCRYPTION_KEY", "AUTH_ADMIN_SECRET", "AUTH_SMTP_PASS"]',
    );
    const noSecret = await deploy(ownSecret, withoutAdmin, { checkOnly: true });
    expect(noSecret.code).toBe(1);
    expect(noSecret.stderr).toContain("secret AUTH_SMTP_PASS is not set");
    expect(noSecret.stderr).not.toContain("AUTH_ADMIN_SECRET is not set");
    // Bundles kept in a directory: only a dry run makes them (a --check bundles nothing to keep).
    const keptWithoutBundles = await deploy(FILLED, SECRETS, { checkOnly: true, outdir: join(out, "none") });
    expect(keptWithoutBundles.code).toBe(2);
    expect(keptWithoutBundles.stderr).toContain("deploy: --outdir goes with --dry-run");
    const planned = await deploy(FILLED, withoutAdmin, { checkOnly: true });
    expect(planned.code).toBe(0);
    expect(planned.stdout).toContain("secrets generated unless set already: AUTH_ADMIN_SECRET");
  }, 60_000);

  it("refuses a service that must send mail and has no way to, showing the binding to add", async () => {
    const refused = await deploy(FILLED_WITHOUT_MAIL, SECRETS);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("no mail transport");
    expect(refused.stderr).toContain("AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED is on");
    expect(refused.stderr).toMatch(/\[\[env\.production\.send_email\]\]\s+name = "EMAIL"/);
    expect(refused.stderr).toContain("AUTH_SMTP_HOST");
    // A transport without the sender it sends from would fail every request.
    const noSender = await deploy(
      withVars(FILLED_WITHOUT_MAIL, { AUTH_SMTP_HOST: "smtp.acme.dev" }),
      SECRETS,
    );
    expect(noSender.code).toBe(1);
    expect(noSender.stderr).not.toContain("no mail transport");
    expect(noSender.stderr).toContain("AUTH_SMTP_SENDER is not set");
    // No verification mail: still refused while another feature mails (a code), and not for mail once none does.
    const noVerification = { AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false" };
    const codes = await deploy(
      withVars(FILLED_WITHOUT_MAIL, { ...noVerification, AUTH_OTP_EMAIL_ENABLED: "true" }),
      SECRETS,
    );
    expect(codes.code).toBe(1);
    expect(codes.stderr).toContain("AUTH_OTP_EMAIL_ENABLED is on");
    const noMail = await deploy(withVars(FILLED_WITHOUT_MAIL, noVerification), SECRETS, { checkOnly: true });
    expect(noMail.stderr).not.toContain("no mail transport");
    expect(noMail.code).toBe(0);
  }, 60_000);

  // One real bundling of both Workers (seconds of CPU each) proves both things a dry run promises: wrangler.toml as
  // cloned, its REPLACE_… ids and example URLs still in it, bundles (the placeholders listed, not refused), with
  // every binding and the production variables; a filled configuration's own checks pass without bundling again.
  it("bundles both Workers for production from wrangler.toml as cloned plus the EMAIL binding, listing each placeholder left, with every binding and production variables; a filled configuration passes its checks", async () => {
    const passed = await deploy(withEmailBinding(TOML), SECRETS, { outdir: join(out, "filled") });
    expect(passed.stderr).not.toContain("refused");
    expect(passed.stderr).not.toContain("deploy: warning");
    expect(passed.code).toBe(0);
    expect(passed.stderr).toContain("dry run with 3 placeholder(s) left, which a real deploy refuses");
    for (const name of PLACEHOLDERS) expect(passed.stderr, name).toContain(`env.production.${name}`);
    expect(passed.stdout).toContain("both Workers bundle, with 3 placeholder(s) left");
    // The plan, without an account to ask: every resource created unless it exists.
    expect(passed.stdout).toContain("create unless it exists: D1 database edge-auth (DB)");
    expect(passed.stdout).toContain("It would answer at https://edge-auth.<your-subdomain>.workers.dev");
    // wrangler's own list of the main Worker's bindings, as it printed it for the production bundle.
    for (const binding of [
      "env.DB",
      "env.FILES",
      "env.OAUTH2_REQUESTS",
      "env.PROVIDER_KEYS",
      "env.IMAGE_TRANSFORMER",
      "env.REFRESH_SESSIONS",
      "env.SESSION_FAMILIES",
      "env.ONE_TIME_CODES",
      "env.RATE_LIMITERS",
      "env.WEBAUTHN_CHALLENGES",
      "env.GUESS_GUARDS",
      "env.SIGN_IN_LOCKOUTS",
      "env.GLOBAL_LIMITER (1000 requests/60s)",
      "env.BRUTE_FORCE_LIMITER (10 requests/60s)",
      "env.SIGNUPS_LIMITER (10 requests/60s)",
      "env.STORAGE_SERVER_URL",
      "env.AUTH_SERVER_URL",
      "env.EMAIL",
    ]) {
      expect(passed.stdout, binding).toContain(binding);
    }
    const variables = passed.stdout.split("\n").filter((line) => line.includes("Environment Variable"));
    expect(variables.length).toBeGreaterThanOrEqual(3);
    // Threat: a production deployment that accepts passwords from known breaches (contract auth.md §13: on by default
    // in production; off for local development, which calls no third party unasked).
    expect(variables.find((line) => line.includes("env.AUTH_PASSWORD_HIBP_ENABLED"))).toMatch(/"true"/);
    for (const line of variables) expect(line, line).not.toMatch(/localhost|127\.0\.0\.1/);
    // Both dry runs reached their end: the image transformer's and the service's.
    expect(passed.stdout.match(/--dry-run: exiting now\./g)).toHaveLength(2);
    // libheif's loader reads `__dirname`, which a Worker has not: the production environment must define it too
    // (`define` is not inherited by environments), or every HEIC transformation fails there.
    expect(readFileSync(join(out, "filled", "images", "worker.js"), "utf8")).not.toMatch(/\b__dirname\b/);
    expect(readFileSync(join(out, "filled", "main", "index.js"), "utf8").length).toBeGreaterThan(100_000);

    // Filled in as a user has it after the README: no placeholder, no warning, where it will answer.
    const filled = await deploy(FILLED, SECRETS, { checkOnly: true });
    expect(filled.stderr).not.toContain("refused");
    expect(filled.stderr).not.toContain("deploy: warning");
    expect(filled.stderr).not.toContain("placeholder");
    expect(filled.code).toBe(0);
    expect(filled.stdout).toContain(
      "deploy: checks passed (--check: nothing bundled or uploaded). It would answer at https://edge-auth.<your-subdomain>.workers.dev",
    );
  }, 180_000);

  it("passes with an SMTP host among the production secrets instead of the binding", async () => {
    const config = withVars(FILLED_WITHOUT_MAIL, { AUTH_SMTP_SENDER: "noreply@acme.dev" });
    expect((await deploy(config, SECRETS)).stderr).toContain("no mail transport");
    // The checks a real deploy makes, without bundling (the test above bundles a passing configuration).
    const passed = await deploy(
      config,
      { ...SECRETS, AUTH_SMTP_HOST: "smtp.acme.dev", AUTH_SMTP_PASS: "p" },
      { checkOnly: true },
    );
    expect(passed.stderr).not.toContain("refused");
    expect(passed.code).toBe(0);
    expect(passed.stdout).toContain("deploy: checks passed (--check");
  }, 180_000);

  it("warns, without refusing, when AUTH_SERVER_URL is on a host the Worker does not answer at", async () => {
    const custom = await deploy(
      FILLED.replace(
        "workers_dev = true",
        'workers_dev = false\nroutes = [{ pattern = "auth.acme.dev", custom_domain = true }]',
      ),
      SECRETS,
      { checkOnly: true },
    );
    expect(custom.code).toBe(0);
    expect(custom.stdout).toContain("It would answer at https://auth.acme.dev");
    expect(custom.stderr).toContain(
      "deploy: warning: AUTH_SERVER_URL (https://edge-auth.acme.workers.dev/auth/v1) is on edge-auth.acme.workers.dev, but the Worker answers at auth.acme.dev",
    );
  }, 180_000);
});

/** A second D1 database for users (AUTH_D1_SHARDS), declared as wrangler.toml's comment says. */
const withShard = (toml: string, shards = "DB,DB_1") =>
  `${withVars(toml, { AUTH_D1_SHARDS: shards })}
[[env.production.d1_databases]]
binding = "DB_1"
database_name = "edge-auth-shard-1"
database_id = "0123456789abcdef0123456789abcdef"
migrations_dir = "migrations"
`;

describe("npm run deploy with users over several D1 databases (AUTH_D1_SHARDS)", () => {
  // The calls a real deploy makes with shards (each created, migrated before the Worker): test/tooling/deploy-recorded.
  it("plans a database the list names and the configuration lacks, and refuses a list not starting with DB", async () => {
    const undeclared = await deploy(withShard(FILLED, "DB,DB_1,DB_2"), SECRETS, { checkOnly: true });
    expect(undeclared.code).toBe(0);
    expect(undeclared.stdout).toMatch(
      /create unless it exists: D1 database edge-auth-shard-2 \(DB_2\) \(added to /,
    );
    expect(undeclared.stdout).not.toContain("edge-auth-shard-1 (DB_1) (added");
    const notHomeFirst = await deploy(withShard(FILLED, "DB_1,DB"), SECRETS, { checkOnly: true });
    expect(notHomeFirst.code).toBe(1);
    expect(notHomeFirst.stderr).toContain("the first database must be DB");
    const passed = await deploy(withShard(FILLED), SECRETS, { checkOnly: true });
    expect(passed.stderr).not.toContain("refused");
    expect(passed.code).toBe(0);
    expect(passed.stdout).toContain("the D1 migrations go to each of the 2 databases: DB, DB_1");
  }, 60_000);
});
