// The deploy path of the README, checked without a Cloudflare account: both Workers bundle for production, every
// binding the code uses is declared there, no production variable points at localhost, and the generated Env type
// matches wrangler.toml.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
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
