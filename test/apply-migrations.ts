import { applyD1Migrations, env } from "cloudflare:test";

// Runs before each test file; applying is idempotent (files of one worker share its storage: vitest.config.ts).
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
