import { applyD1Migrations, env } from "cloudflare:test";
import { afterEach, vi } from "vitest";

// Runs before each test file; applying is idempotent (files of one worker share its storage: vitest.config.ts).
// Every shard gets every migration, as `npm run deploy` applies them (src/db/shards.ts).
for (const name of String(env.AUTH_D1_SHARDS ?? "DB").split(",")) {
  await applyD1Migrations(env[name] as D1Database, env.TEST_MIGRATIONS);
}

// Files of one worker share its globals too: a test's fake clock must never outlive it.
afterEach(() => {
  vi.useRealTimers();
});
