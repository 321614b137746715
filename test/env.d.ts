import type { D1Migration } from "cloudflare:test";
import type { Env as WorkerEnv } from "../src/env";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      TEST_MIGRATIONS: D1Migration[];
      CF_EMAIL: SendEmail;
      /** The second shard of the workers projects (vitest.config.ts `TEST_SHARDS`). */
      DB_1: D1Database;
      AUTH_D1_SHARDS: string;
      /** A consumer Worker of the service binding (test/fakes/binding-consumer.js). */
      BINDING_CONSUMER: Fetcher;
    }
  }
}
