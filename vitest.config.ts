import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
// @ts-expect-error: a plain .mjs helper shared with `npm start`
import { generateSecrets } from "./scripts/secrets.mjs";
import { imagesWorker } from "./test/support/images-worker";

const secrets = generateSecrets();

/**
 * The Worker's bindings as `wrangler.toml` declares them, and nothing from the developer's machine. Given through
 * the plugin's `wrangler.configPath`, wrangler would also read `.dev.vars` (or `.env`) beside the file, which
 * `npm start` fills with development switches, so the suite's outcome would depend on what a developer last ran.
 * Naming an env file that does not exist makes wrangler read no local file at all; the process environment is not
 * read either unless CLOUDFLARE_INCLUDE_PROCESS_ENV says so, which is pinned off here. Every variable a test relies
 * on is then set below or by the test itself. CI runs the suite once more with a hostile `.dev.vars` (.ci/run).
 */
process.env.CLOUDFLARE_INCLUDE_PROCESS_ENV = "false";
const fromWranglerToml = (
  unstable_getMiniflareWorkerOptions as (
    path: string,
    env: string | undefined,
    options: { envFiles: string[] },
  ) => ReturnType<typeof unstable_getMiniflareWorkerOptions>
)("./wrangler.toml", undefined, { envFiles: ["./test/no-local-env-file"] });
const {
  modulesRules,
  bindings: tomlVars,
  ...workerOptions
} = fromWranglerToml.workerOptions as {
  modulesRules?: { type: "ESModule" | "CommonJS" | "Text" | "Data" | "CompiledWasm"; include: string[] }[];
  bindings?: Record<string, unknown>;
  [option: string]: unknown;
};

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [
          cloudflareTest(async () => ({
            main: "./src/index.ts",
            miniflare: {
              ...workerOptions,
              modulesRules,
              bindings: {
                ...tomlVars,
                ...secrets,
                AUTH_DEV_MAILBOX: "true",
                // Every test request comes from one address; test/rate-limits/rate-limits.test.ts switches it on.
                AUTH_RATE_LIMIT_ENABLE: "false",
                TEST_MIGRATIONS: await readD1Migrations("./migrations"),
              },
              // Outbound HTTP (HIBP, …) goes to a fake Worker instead of the internet; IMAGE_TRANSFORMER stays
              // as wrangler.toml binds it, to the transformer Worker below.
              serviceBindings: {
                ...(workerOptions.serviceBindings as Record<string, unknown>),
                OUTBOUND: "outbound-fakes",
              },
              // Miniflare's own Email Service emulation, under another name: test/mail binds it as EMAIL per test.
              email: {
                send_email: [{ name: "CF_EMAIL", allowed_sender_addresses: ["noreply@example.com"] }],
              },
              workers: [
                { name: "outbound-fakes", modules: true, scriptPath: "./test/fakes/outbound.js" },
                imagesWorker(),
              ],
            },
          })),
        ],
        test: {
          name: "workers",
          include: ["test/**/*.test.ts"],
          exclude: ["test/compat/**"],
          setupFiles: ["./test/apply-migrations.ts"],
          // A real SMTP server on loopback for the SMTP transport's tests.
          globalSetup: ["./test/fakes/smtp-sink.ts"],
        },
      },
      {
        test: {
          name: "compat",
          include: ["test/compat/**/*.test.ts"],
          environment: "node",
          globalSetup: ["./test/compat/wrangler-dev.ts"],
          testTimeout: 30_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
