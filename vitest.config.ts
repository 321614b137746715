import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
// @ts-expect-error: a plain .mjs helper shared with `npm start`
import { generateSecrets } from "./scripts/secrets.mjs";

const secrets = generateSecrets();

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [
          cloudflareTest(async () => ({
            main: "./src/index.ts",
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                ...secrets,
                AUTH_DEV_MAILBOX: "true",
                // Every test request comes from one address; test/routes/rate-limit.test.ts switches it on.
                AUTH_RATE_LIMIT_ENABLE: "false",
                TEST_MIGRATIONS: await readD1Migrations("./migrations"),
              },
              // Outbound HTTP (HIBP, …) goes to a fake Worker instead of the internet.
              serviceBindings: { OUTBOUND: "outbound-fakes" },
              // Miniflare's own Email Service emulation, under another name: test/mail binds it as EMAIL per test.
              email: {
                send_email: [{ name: "CF_EMAIL", allowed_sender_addresses: ["noreply@example.com"] }],
              },
              workers: [{ name: "outbound-fakes", modules: true, scriptPath: "./test/fakes/outbound.js" }],
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
