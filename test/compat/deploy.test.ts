// The deploy path of the README, checked without a Cloudflare account: both Workers bundle for production, every
// binding the code uses is declared there, no production variable points at localhost, and the generated Env type
// matches wrangler.toml.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const WRANGLER = join(process.cwd(), "node_modules", "wrangler", "bin", "wrangler.js");
const env = { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", CI: "true" };
const out = mkdtempSync(join(tmpdir(), "edge-auth-deploy-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const wrangler = (...args: string[]) =>
  run(process.execPath, [WRANGLER, ...args], { env, maxBuffer: 1 << 24 });

describe("the production deploy path", () => {
  it("bundles the main Worker for production with every binding and production variables", async () => {
    const { stdout } = await wrangler(
      "deploy",
      "--dry-run",
      "--env",
      "production",
      "--minify",
      "--outdir",
      join(out, "main"),
    );
    for (const binding of [
      "env.DB",
      "env.FILES",
      "env.OAUTH2_REQUESTS",
      "env.PROVIDER_KEYS",
      "env.IMAGE_TRANSFORMER",
      "env.REFRESH_SESSIONS",
      "env.SESSION_FAMILIES",
      "env.CODE_CHALLENGES",
      "env.RATE_LIMITERS",
      "env.WEBAUTHN_CHALLENGES",
      "env.GUESS_GUARDS",
      "env.GLOBAL_LIMITER (1000 requests/60s)",
      "env.BRUTE_FORCE_LIMITER (10 requests/60s)",
      "env.SIGNUPS_LIMITER (10 requests/60s)",
      "env.STORAGE_SERVER_URL",
      "env.AUTH_SERVER_URL",
    ]) {
      expect(stdout, binding).toContain(binding);
    }
    const variables = stdout.split("\n").filter((line) => line.includes("Environment Variable"));
    expect(variables.length).toBeGreaterThanOrEqual(3);
    for (const line of variables) expect(line, line).not.toMatch(/localhost|127\.0\.0\.1/);
  }, 120_000);

  it("bundles the image transformer for production", async () => {
    const { stdout } = await wrangler(
      "deploy",
      "--dry-run",
      "-c",
      "wrangler.images.toml",
      "--env",
      "production",
      "--minify",
      "--outdir",
      join(out, "images"),
    );
    expect(stdout).toContain("--dry-run: exiting now.");
  }, 120_000);

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

/** `npm run deploy` (scripts/deploy.mjs) with a configuration and secrets file of the test's own. */
async function deploy(config: string, secrets?: Record<string, string>) {
  const name = `wrangler.deploy-check-${crypto.randomUUID().slice(0, 8)}`;
  // Beside wrangler.toml, so that its relative paths (main, migrations_dir) mean the same.
  const configPath = `${name}.toml`;
  const secretsPath = join(out, `${name}.secrets.json`);
  writeFileSync(configPath, config);
  if (secrets) writeFileSync(secretsPath, JSON.stringify(secrets));
  try {
    const args = [
      "scripts/deploy.mjs",
      "--dry-run",
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

const TOML = readFileSync("wrangler.toml", "utf8");
/** wrangler.toml as a user has it after following the README: ids and URLs of their own. */
const FILLED = TOML.replace(/REPLACE_WITH_[A-Za-z0-9_]+/g, "0123456789abcdef0123456789abcdef")
  .replace(/https:\/\/auth\.example\.com/g, "https://edge-auth.acme.workers.dev")
  .replace(/https:\/\/app\.example\.com/g, "https://app.acme.dev");
const SECRETS = { AUTH_JWT_PRIVATE_KEYS: "[]", AUTH_ENCRYPTION_KEY: "00", AUTH_ADMIN_SECRET: "x" };

describe("npm run deploy refuses what cannot work, naming each thing to fix", () => {
  it("refuses the repository's wrangler.toml as it is: every placeholder id and example URL is named", async () => {
    const refused = await deploy(TOML);
    expect(refused.code).toBe(1);
    for (const name of [
      "d1_databases[0].database_id",
      "kv_namespaces[0].id",
      "kv_namespaces[1].id",
      "vars.AUTH_SERVER_URL",
      "vars.AUTH_CLIENT_URL",
      "vars.STORAGE_SERVER_URL",
    ]) {
      expect(refused.stderr, name).toContain(`env.production.${name}`);
    }
  }, 60_000);

  it("refuses a Worker that would get no URL, and a missing required secret", async () => {
    const noUrl = await deploy(FILLED.replace("workers_dev = true", "workers_dev = false"), SECRETS);
    expect(noUrl.code).toBe(1);
    expect(noUrl.stderr).toContain("the Worker would get no URL");
    const { AUTH_ADMIN_SECRET: _left, ...withoutAdmin } = SECRETS;
    const noSecret = await deploy(FILLED, withoutAdmin);
    expect(noSecret.code).toBe(1);
    expect(noSecret.stderr).toContain("secret AUTH_ADMIN_SECRET is not set");
  }, 60_000);

  it("passes a filled configuration, bundles both Workers and says where the service will answer", async () => {
    const passed = await deploy(FILLED, SECRETS);
    expect(passed.stderr).not.toContain("refused");
    expect(passed.code).toBe(0);
    expect(passed.stdout).toContain("It would answer at https://edge-auth.<your-subdomain>.workers.dev");
    const custom = await deploy(
      FILLED.replace(
        "workers_dev = true",
        'workers_dev = false\nroutes = [{ pattern = "auth.acme.dev", custom_domain = true }]',
      ),
      SECRETS,
    );
    expect(custom.code).toBe(0);
    expect(custom.stdout).toContain("It would answer at https://auth.acme.dev");
  }, 180_000);
});
