import { applyD1Migrations, env } from "cloudflare:test";
import { afterEach, vi } from "vitest";

// Runs before each test file; applying is idempotent (files of one worker share its storage: vitest.config.ts).
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// Files of one worker share its globals too: a test's fake clock must never outlive it.
afterEach(() => {
  vi.useRealTimers();
});
