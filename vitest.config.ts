import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { createLogger } from "vite";
import { defineConfig } from "vitest/config";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
// @ts-expect-error: a plain .mjs helper shared with `npm start`
import { generateSecrets } from "./scripts/secrets.mjs";
import { imagesWorker } from "./test/support/images-worker.ts";

const secrets = generateSecrets();

/**
 * The Worker's bindings as `wrangler.toml` declares them, and nothing from the developer's machine. Given through
 * the plugin's `wrangler.configPath`, wrangler would also read `.dev.vars` (or `.env`) beside the file, which
 * `npm start` fills with development switches, so the suite's outcome would depend on what a developer last ran.
 * Naming an env file that does not exist makes wrangler read no local file at all; the process environment is not
 * read either unless CLOUDFLARE_INCLUDE_PROCESS_ENV says so, which is pinned off here. Every variable a test relies
 * on is then set below or by the test itself; test/local-settings.test.ts checks it, and CI runs that check (and a
 * few more files) again with a hostile `.dev.vars`, PORT and [vars] (.ci/run).
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
  // wrangler.toml's top-level [vars], if a developer added some: not the suite's business (TEST_VARS below).
  bindings: _tomlVars,
  ...workerOptions
} = fromWranglerToml.workerOptions as {
  modulesRules?: { type: "ESModule" | "CommonJS" | "Text" | "Data" | "CompiledWasm"; include: string[] }[];
  bindings?: Record<string, unknown>;
  [option: string]: unknown;
};

/**
 * The URLs the tests are written against (test/helpers.ts `SERVER`), whatever PORT, .dev.vars or wrangler.toml say:
 * a developer moving their local server must not move the suite's.
 */
const TEST_VARS = {
  AUTH_SERVER_URL: "http://localhost:8787/auth/v1",
  STORAGE_SERVER_URL: "http://localhost:8787",
  AUTH_CLIENT_URL: "http://localhost:3000",
};

/** The D1 bindings the workers projects spread users over (test/support/shards.ts reads rows through them). */
const TEST_SHARDS = ["DB", "DB_1"] as const;

/**
 * Every plain-text binding the Worker under test gets, and nothing else: test/local-settings.test.ts checks that the
 * Worker's `env` holds exactly these (so nothing came from .dev.vars, wrangler.toml's [vars] or the process
 * environment), which is what lets CI run a small smoke subset, not the whole suite again, under a hostile
 * `.dev.vars` (.ci/run).
 */
const POOL_VARS: Record<string, string> = {
  ...TEST_VARS,
  AUTH_D1_SHARDS: TEST_SHARDS.join(","),
  ...secrets,
  AUTH_DEV_MAILBOX: "true",
  // Every test request comes from one address; test/rate-limits/rate-limits.test.ts switches it on.
  AUTH_RATE_LIMIT_ENABLE: "false",
  // The queues' consumers run inside the pool with these bindings: a failed event or webhook delivery comes back at
  // once rather than after 10, 20, 40… seconds (test/webhooks/); the schedule itself is asserted where it is computed
  // (test/events/consume.test.ts, test/webhooks/delivery.test.ts). Zero is refused unless the server is local.
  AUTH_EVENTS_RETRY_DELAY_SECONDS: "0",
  // argon2id at its smallest cost (src/lib/password.ts): the production cost is asserted once, in
  // test/lib/password.test.ts. Refused unless the server is local.
  TEST_PASSWORD_HASH: "cheap",
};

/**
 * wrangler.toml's queue consumers, each batch handed over as soon as a message arrives instead of after up to a
 * second (`max_batch_timeout`): the suite's events and deliveries are few, and the batching itself is the queue's.
 */
const queueConsumers = Object.fromEntries(
  Object.entries((workerOptions.queueConsumers ?? {}) as Record<string, Record<string, unknown>>).map(
    ([queue, consumer]) => [queue, { ...consumer, maxBatchTimeout: 0 }],
  ),
);

/**
 * A consumer of the service binding (test/fakes/binding-consumer.js), bound to the Worker under test's entrypoints as
 * an app's Worker binds them (docs/workers.md). The plugin renames the Worker under test to its runner's name,
 * `vitest-plugin-runner-<project>` (its `getRunnerName`), which is what another Worker's binding must name.
 */
const bindingConsumer = (project: string) => {
  const service = `vitest-plugin-runner-${project}`;
  return {
    name: "binding-consumer",
    modules: true,
    scriptPath: "./test/fakes/binding-consumer.js",
    compatibilityDate: "2026-11-01",
    serviceBindings: {
      AUTH: { name: service, entrypoint: "AuthService" },
      ADMIN: { name: service, entrypoint: "AuthAdmin", props: { caller: "billing-worker" } },
      // A binding that names no caller: refused, so every admin event names one.
      ADMIN_UNNAMED: { name: service, entrypoint: "AuthAdmin" },
      // Callers an attacker would declare (test/platform/binding-attacks.test.ts): a forged log line, 10 kB of name.
      ADMIN_CONTROL: {
        name: service,
        entrypoint: "AuthAdmin",
        props: { caller: 'billing\n{"caller":"root"}\u0000' },
      },
      ADMIN_LONG: { name: service, entrypoint: "AuthAdmin", props: { caller: "x".repeat(10_000) } },
    },
  };
};

/** The Worker under test with the suite's bindings, inside workerd (one instance per project worker). */
const workersPool = (project: string) =>
  cloudflareTest(async () => ({
    main: "./src/index.ts",
    miniflare: {
      ...workerOptions,
      modulesRules,
      // Two shards: every user-keyed row of the suite is spread over DB and DB_1 by its user's slot
      // (src/db/shards.ts), so the whole suite proves the sharded paths; `npm start` and the compat tests run with
      // wrangler.toml's one database, the default.
      d1Databases: {
        ...(workerOptions.d1Databases as Record<string, string>),
        [TEST_SHARDS[1]]: "edge-auth-shard-1",
      },
      queueConsumers,
      bindings: {
        ...POOL_VARS,
        TEST_MIGRATIONS: await readD1Migrations("./migrations"),
      },
      // Outbound HTTP (HIBP, …) goes to a fake Worker instead of the internet; IMAGE_TRANSFORMER stays
      // as wrangler.toml binds it, to the transformer Worker below.
      serviceBindings: {
        ...(workerOptions.serviceBindings as Record<string, unknown>),
        OUTBOUND: "outbound-fakes",
        BINDING_CONSUMER: "binding-consumer",
      },
      // Miniflare's own Email Service emulation, under another name: test/mail binds it as EMAIL per test.
      email: {
        send_email: [{ name: "CF_EMAIL", allowed_sender_addresses: ["noreply@example.com"] }],
      },
      workers: [
        { name: "outbound-fakes", modules: true, scriptPath: "./test/fakes/outbound.js" },
        // Bundled when a workers project's pool first starts, once per process (test/support/images-worker.ts).
        imagesWorker(),
        bindingConsumer(project),
      ],
    },
  }));

/**
 * Test files whose expectations span the whole database, or that change what every other file would see (a key
 * rotation changes the signing key of the deployment): each runs against storage of its own. Every other file shares
 * its worker's storage with the files that ran before it in that worker, which is what makes the suite fast: they
 * use unique emails, ids and addresses, and restore anything global they touch.
 */
const NEEDS_OWN_STORAGE = [
  "test/admin/keys.test.ts",
  // A rotation too: a warm isolate meeting the key rotated in elsewhere.
  "test/faults/key-set.test.ts",
  "test/storage/admin.test.ts",
  // It starts with no cut-over recorded and records its own (one per deployment), and it counts a log line said once
  // per isolate: both are the deployment's, not the file's.
  "test/move-in/imported-tokens.test.ts",
  // The same for the Supabase cut-over, and the old project's API keys they record (issue 44).
  "test/faces/supabase/imported-tokens.test.ts",
  "test/faces/supabase/old-api-keys.test.ts",
  // AuthZEN's subject search walks every user of the deployment: the file's own, not every file's before it.
  "test/permissions/search.test.ts",
  // Its aborted move must leave every shard as it was, and an abort removes every row of the range from the target:
  // rows other files leave outside their slots' shard (one-shard deployments' audit events, a file row written by
  // hand) were taken for its copy's, one run in a few.
  "test/db/slot-moves.test.ts",
];

/**
 * Vite's logger, less one warning about a dependency's packaging that no one here can act on (oauth4webapi ships a
 * source map naming sources it does not ship): the suite prints nothing that is not about a failing test.
 */
const logger = createLogger();
const aboutDependencySourceMap = (message: string) =>
  /^Sourcemap for ".*\/node_modules\/.*" points to missing source files/.test(message);
const { warn, warnOnce } = logger;
logger.warn = (message, options) => aboutDependencySourceMap(message) || warn(message, options);
logger.warnOnce = (message, options) => aboutDependencySourceMap(message) || warnOnce(message, options);

/**
 * Files of the workers projects run three at a time whatever the machine (Vitest's default is one fewer than the
 * cores: one, on the 2-core machines CI runs on). Much of the suite waits rather than computes (timeouts, retry
 * backoffs, hung fakes, D1 and the queues in workerd's own threads), and each file already stands alone: its own
 * workerd per worker, unique emails, ids and addresses. On the 2-core machine a third lane took the suite from 376 to
 * 317 s, same tree, runs back to back (docs/decisions.md, "Issue 43: a third lane"). The compatibility tests share
 * one `wrangler dev`, its page and app ports and its browser, so they run one at a time (a later `groupOrder`:
 * projects of one group must agree on `maxWorkers`); `npm test` runs them in a Vitest process of their own, beside
 * the others (scripts/test.mjs), since one process runs its groups one after the other.
 */
/**
 * The compatibility files that need none of the shared server's parts (test/compat/wrangler-dev.ts): each works in
 * checkouts of its own (the deploy checks bundle there; `npm start` runs its own wrangler dev there, on ports of its
 * own). They run beside the workers projects, where their waiting for wrangler fills a lane, not the whole machine.
 */
const STANDS_ALONE = ["test/compat/deploy.test.ts", "test/compat/start-script.test.ts"];
/**
 * A test's own budget: Vitest's default of 5 s is two to five times what the longest tests of these projects take on
 * the 2-core machine running the suite (1-2.6 s), which a machine busy with other work erased: a run beside other
 * sessions (load average 20) failed 17 tests by the 5 s timeout alone, each passing on its own. 15 s still stops a
 * test that hangs; a test that waits on purpose says its own budget. Hooks (a file's users, its servers) get twice that.
 */
const TEST_TIMEOUT_MS = 15_000;
const PARALLEL = {
  maxWorkers: 3,
  sequence: { groupOrder: 0 },
  testTimeout: TEST_TIMEOUT_MS,
  hookTimeout: 2 * TEST_TIMEOUT_MS,
};
const ONE_AT_A_TIME = { maxWorkers: 1, sequence: { groupOrder: 1 } };

export default defineConfig({
  customLogger: logger,
  test: {
    // Tests print nothing unless they fail: the service's log lines (audit, expected errors) stay with their test.
    silent: "passed-only",
    projects: [
      {
        plugins: [workersPool("workers")],
        customLogger: logger,
        // Binary fixtures the tests import as `?inline` data URLs (test/types/fixtures.d.ts).
        assetsInclude: ["**/*.heic"],
        test: {
          name: "workers",
          ...PARALLEL,
          provide: { poolVars: POOL_VARS },
          // One workerd per worker, reused across files: per-file start-up was most of the suite's time.
          isolate: false,
          include: ["test/**/*.test.ts"],
          exclude: ["test/compat/**", "test/tooling/**", ...NEEDS_OWN_STORAGE],
          setupFiles: ["./test/apply-migrations.ts", "./test/preload-cedar.ts"],
          // A real SMTP server on loopback for the SMTP transport's tests; the Pwned Passwords range API's fake.
          globalSetup: [
            "./test/fakes/smtp-sink.ts",
            "./test/fakes/oidc-idp.ts",
            "./test/fakes/pwned-passwords.ts",
            // An OpenTelemetry collector's OTLP/HTTP logs receiver, for the audit's export (test/audit-export/).
            "./test/fakes/otlp-receiver.ts",
            // A Supabase project (PostgREST, Edge Functions, Realtime's socket) for the face's forwarded data calls.
            "./test/fakes/supabase-upstream.ts",
          ],
        },
      },
      {
        plugins: [workersPool("own-storage")],
        customLogger: logger,
        test: {
          // Named to sort before `tooling` and `workers`: files of one group start in the order of their projects'
          // names, and each of these starts a workerd of its own (seconds, whatever the file's length). Started last,
          // they were a tail of 10-15 s after the workers project with a lane or two idle; started first, their
          // start-ups overlap the long `compat-alone` files (docs/decisions.md, "Test cost").
          name: "own-storage",
          ...PARALLEL,
          include: NEEDS_OWN_STORAGE,
          setupFiles: ["./test/apply-migrations.ts"],
          // The Supabase project's fake, for the old tokens' data calls (test/faces/supabase/imported-tokens.test.ts).
          globalSetup: ["./test/fakes/supabase-upstream.ts"],
        },
      },
      {
        test: {
          // The project's own tools (the lint's rules) checked as processes, in Node.
          name: "tooling",
          ...PARALLEL,
          // One Node worker per lane for all the files, one after another: a worker of its own per file cost its
          // spawn and environment each time (~1.3 s, twenty files). The files share nothing but the process: each
          // works in directories, servers and child processes of its own, and restores what it stubs.
          isolate: false,
          include: ["test/tooling/**/*.test.ts"],
          environment: "node",
        },
      },
      {
        test: {
          // The deploy checks and `npm start` in directories of their own, with no shared server: beside the others.
          name: "compat-alone",
          ...PARALLEL,
          include: STANDS_ALONE,
          environment: "node",
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "compat",
          ...ONE_AT_A_TIME,
          // One process for all the files, one after another: a process of its own per file cost its start and the
          // loading of playwright, the clients and their helpers again each time (18 files on the busy 2-core machine:
          // 32 s between files, 7.5 s in one process). The files share nothing but the server (unique emails, ids and
          // ports already), and test/compat holds no state per file in its helpers (axe.ts's server serves them all).
          isolate: false,
          include: ["test/compat/**/*.test.ts"],
          exclude: STANDS_ALONE,
          environment: "node",
          // The enterprise sign-ins' OIDC provider (test/fakes/oidc-idp.ts) for compat/organizations.test.ts.
          globalSetup: ["./test/compat/wrangler-dev.ts", "./test/fakes/oidc-idp.ts"],
          // The server starts in the background as the process does (beside the other projects: scripts/test.mjs);
          // each file waits for it first.
          setupFiles: ["./test/compat/server-ready.ts"],
          // A browser flow against the shared server takes 2–5 s on a quiet machine; beside the workers lanes on a
          // slow one the longest without a budget of its own took 19 s (the CIBA flows, the console's), 0.6 of the
          // 30 s this was. 60 s still stops a hung one; the files with more work say their own.
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // What a compat test polls for waits on the server and the browser (a sign-in's hash, a page's script), as
          // a Playwright step does within its page's 15 s: Vitest's own 1 s default failed a "try it" sign-in whose
          // answer came after it on a busy machine. A poll that waits for more says its own.
          expect: { poll: { timeout: 15_000 } },
        },
      },
    ],
  },
});
