// Shared by the benchmarks: bundle the Worker as `wrangler deploy` would, serve it with Miniflare, drive it with
// autocannon, print results next to a baseline measured in the same run.
import { execFile, execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import autocannon from "autocannon";
import { convertV4MiniflareOptions, Log, LogLevel, Miniflare } from "miniflare";
import { experimental_readRawConfig } from "wrangler";
import { generateSecrets, generateSigningJwk } from "../scripts/secrets.mjs";

/**
 * `Request.cf` from Miniflare's placeholder: without it each Miniflare outside Vitest fetched
 * https://workers.cloudflare.com/cf.json (the soak printed its ENOTFOUND here); the benches call no outside host.
 */
const NO_CF_FETCH = { cf: false };

export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
export const DURATION = Number(process.env.BENCH_SECONDS ?? 10);

/**
 * The Durable Object bindings as wrangler.toml declares them (every class SQLite-backed, as its migrations make
 * them): read, not copied, so a renamed class or binding cannot leave the bench serving a class that is gone.
 */
function durableObjectsOfWranglerToml() {
  const { rawConfig } = experimental_readRawConfig({ config: "wrangler.toml" });
  return Object.fromEntries(
    rawConfig.durable_objects.bindings.map(({ name, class_name }) => [
      name,
      { className: class_name, useSQLite: true },
    ]),
  );
}

/** Bundles both Workers as `wrangler deploy` would: the main one into `outdir`, the image transformer beside it. */
export function bundle(outdir) {
  const wrangler = join("node_modules", "wrangler", "bin", "wrangler.js");
  const env = { ...process.env, WRANGLER_SEND_METRICS: "false" };
  execFileSync(process.execPath, [wrangler, "deploy", "--dry-run", "--outdir", outdir], {
    stdio: "pipe",
    env,
  });
  execFileSync(
    process.execPath,
    [wrangler, "deploy", "--dry-run", "-c", "wrangler.images.toml", "--outdir", `${outdir}-images`],
    { stdio: "pipe", env },
  );
}

/**
 * As `bundle`, both Workers at once and without blocking the caller's event loop: for a test that has requests in
 * flight meanwhile (test/compat/crowd.test.ts bundles while its first crowd runs against `wrangler dev`).
 */
export async function bundleInBackground(outdir) {
  const wrangler = join("node_modules", "wrangler", "bin", "wrangler.js");
  const env = { ...process.env, WRANGLER_SEND_METRICS: "false" };
  const run = promisify(execFile);
  await Promise.all([
    run(process.execPath, [wrangler, "deploy", "--dry-run", "--outdir", outdir], { env }),
    run(
      process.execPath,
      [wrangler, "deploy", "--dry-run", "-c", "wrangler.images.toml", "--outdir", `${outdir}-images`],
      { env },
    ),
  ]);
}

/** Bundles the better-auth peer (bench/peers/better-auth) into `outdir` from its own wrangler.toml, as ours is. */
export function bundleBetterAuth(outdir) {
  const wrangler = join("node_modules", "wrangler", "bin", "wrangler.js");
  execFileSync(
    process.execPath,
    [
      wrangler,
      "deploy",
      "--dry-run",
      "-c",
      join("bench", "peers", "better-auth", "wrangler.toml"),
      "--outdir",
      outdir,
    ],
    { stdio: "pipe", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
  );
}

/** The modules of a bundle, its entry first. */
function modulesOf(root, entry) {
  return readdirSync(root)
    .filter((file) => file.endsWith(".js") || file.endsWith(".wasm"))
    .sort((a) => (a === entry ? -1 : 1))
    .map((file) => ({ type: file.endsWith(".wasm") ? "CompiledWasm" : "ESModule", path: join(root, file) }));
}

/** The per-address Rate Limiting bindings of wrangler.toml (src/rate-limits/buckets.ts ADDRESS_LIMITER_BINDINGS). */
const ADDRESS_LIMITERS = [
  "GLOBAL_LIMITER",
  "BRUTE_FORCE_LIMITER",
  "SIGNUPS_LIMITER",
  "EMAIL_LIMITER",
  "SMS_LIMITER",
  "REFRESH_LIMITER",
  "OAUTH2_LIMITER",
  "TRANSFORM_LIMITER",
  "REGISTRATION_LIMITER",
];

/**
 * The bundled Worker with every binding of wrangler.toml, and the image transformer Worker it binds, storage
 * persisted under `dir/<state>` (two instances of one bundle keep apart by naming their own). `workers`: more
 * Workers in the same workerd, which may bind the service's entrypoints (bench/workers.mjs's consumer); `port`: the
 * service's, when a Worker must know its URL before it starts (0: any free one).
 */
export function workerFromBundle(
  dir,
  bindings,
  { inspectorPort, state = "state", build = "build", entry = "index.js", port = 0, workers = [] } = {},
) {
  const compatibility = { compatibilityDate: "2026-11-01", compatibilityFlags: ["nodejs_compat"] };
  return new Miniflare(
    convertV4MiniflareOptions({
      log: new Log(LogLevel.WARN),
      ...NO_CF_FETCH,
      // bench/profile.mjs: the V8 inspector of the main Worker, at ws://127.0.0.1:<port>/edge-auth.
      ...(inspectorPort ? { inspectorPort } : {}),
      host: "127.0.0.1",
      port,
      defaultPersistRoot: join(dir, state),
      workers: [
        {
          name: "edge-auth",
          unsafeInspectorProxy: Boolean(inspectorPort),
          modulesRoot: join(dir, build),
          modules: modulesOf(join(dir, build), entry),
          ...compatibility,
          d1Databases: SHARDS,
          r2Buckets: ["FILES"],
          kvNamespaces: ["OAUTH2_REQUESTS", "PROVIDER_KEYS"],
          // As wrangler.toml binds them, with limits no bench run reaches (their cost shows, nothing is refused).
          ratelimits: Object.fromEntries(
            ADDRESS_LIMITERS.map((name, i) => [
              name,
              { namespace_id: String(1001 + i), simple: { limit: 100_000_000, period: 60 } },
            ]),
          ),
          durableObjects: durableObjectsOfWranglerToml(),
          // The event stream's producers, as wrangler.toml binds them: a mutating request drains the outbox into
          // EVENTS after its answer (src/events/outbox.ts), as in production. No consumer runs here.
          // `BENCH_EVENTS=off` leaves them out (no drain: the outbox only grows), to measure what the drain costs.
          ...(process.env.BENCH_EVENTS === "off"
            ? {}
            : {
                queueProducers: {
                  EVENTS: { queueName: "edge-auth-events" },
                  WEBHOOK_DELIVERIES: { queueName: "edge-auth-webhook-deliveries" },
                },
              }),
          serviceBindings: {
            IMAGE_TRANSFORMER: { name: "edge-auth-images", entrypoint: "ImageTransformer" },
          },
          bindings,
        },
        {
          name: "edge-auth-images",
          modulesRoot: join(dir, "build-images"),
          modules: modulesOf(join(dir, "build-images"), "worker.js"),
          ...compatibility,
        },
        ...workers,
      ],
    }),
  );
}

/**
 * The better-auth peer bundled into `dir/<build>` by bundleBetterAuth, served by Miniflare like ours (its own workerd
 * process, a child of this one), with a local D1 persisted under `dir/state-better-auth`.
 */
export function betterAuthWorker(dir, build, bindings) {
  return new Miniflare(
    convertV4MiniflareOptions({
      log: new Log(LogLevel.WARN),
      ...NO_CF_FETCH,
      host: "127.0.0.1",
      port: 0,
      defaultPersistRoot: join(dir, "state-better-auth"),
      modulesRoot: join(dir, build),
      modules: modulesOf(join(dir, build), "worker.js"),
      compatibilityDate: "2026-11-01",
      compatibilityFlags: ["nodejs_compat"],
      d1Databases: ["DB"],
      bindings,
    }),
  );
}

export const PASSWORD = "benchmark password";

/**
 * The D1 bindings users are spread over (src/db/shards.ts): `DB` alone, the default, or `BENCH_SHARDS=2` for `DB`
 * and `DB_1`, to measure what the directory adds (a sign-in by email reads it before the user's shard).
 */
export const SHARDS = process.env.BENCH_SHARDS === "2" ? ["DB", "DB_1"] : ["DB"];

export async function post(base, path, body, token) {
  const headers = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** Limits on: every bucket counted as in production, with exact bursts raised so nothing is refused. */
export const LIMITS_ON = Object.fromEntries(
  ["GLOBAL", "BRUTE_FORCE", "REFRESH", "SIGNUPS", "EMAIL"].map((b) => [
    `AUTH_RATE_LIMIT_${b}_BURST`,
    "100000000",
  ]),
);

/**
 * One instance of the bundled Worker, its database migrated, a user signed up, and a pool of live refresh tokens,
 * one per session: a refresh takes one and its answer puts the successor back, so every refresh really rotates.
 * (autocannon resets per-client context between requests, so the pool is shared.)
 */
export async function serveOurs(
  dir,
  limits,
  alg = "RS256",
  { build = "build", entry, state, bindings = {}, port, workers } = {},
) {
  const secrets = generateSecrets();
  const mf = workerFromBundle(
    dir,
    {
      ...secrets,
      // The first key signs access tokens; an RSA key beside it signs ID tokens, as after a switch of algorithm.
      ...(alg === "RS256"
        ? {}
        : { AUTH_JWT_PRIVATE_KEYS: JSON.stringify([generateSigningJwk(alg), generateSigningJwk()]) }),
      AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false",
      AUTH_D1_SHARDS: SHARDS.join(","),
      // The Supabase face beside the Nhost one: bench/run.mjs measures each of its rows against the Nhost row.
      AUTH_SUPABASE_API_ENABLED: "true",
      // One client address drives thousands of requests: with limits off nothing is counted.
      ...(limits ? LIMITS_ON : { AUTH_RATE_LIMIT_ENABLE: "false" }),
      ...bindings,
    },
    { build, entry, state: state ?? `state-limits-${limits ? "on" : "off"}-${alg}`, port, workers },
  );
  const base = `${(await mf.ready).origin}/auth/v1`;
  await applyMigrations(mf);
  const email = "bench@example.com";
  const { session } = await post(base, "/signup/email-password", { email, password: PASSWORD });
  const pool = [];
  const signIn = async () =>
    (await post(base, "/signin/email-password", { email, password: PASSWORD })).session;
  /**
   * Fills the pool with fresh sessions, two a connection, replacing what it held. A run ends with up to one request a
   * connection in flight, whose token the service rotated but whose successor autocannon drops; and the tokens left
   * may name sessions a later sign-in row ended: it signs the bench user in hundreds of times, past
   * AUTH_MAX_SESSIONS_PER_USER (200), which ends the user's least recently used sessions first, the pool's. A run of
   * refreshes therefore starts from sessions newer than any sign-in row before it.
   */
  const topUp = async () => {
    pool.length = 0;
    while (pool.length < CONNECTIONS * 2) pool.push((await signIn()).refreshToken);
  };
  await topUp();
  const instance = { mf, base, email, session, pool, secrets, topUp };
  /** A fresh access token for the session rows of a later part of the bench (access tokens live 15 minutes). */
  instance.renewSession = async () => {
    instance.session = await signIn();
  };
  return instance;
}

/** The platform floor (`floor-worker.js`): a Worker with no logic, one D1 query, one Durable Object call, one R2 read. */
export function floorWorker() {
  return new Miniflare(
    convertV4MiniflareOptions({
      log: new Log(LogLevel.WARN),
      ...NO_CF_FETCH,
      host: "127.0.0.1",
      port: 0,
      // The argon2id WASM and its loader as the service bundles them (src/lib/argon2.ts), beside the floor's script.
      modulesRoot: import.meta.dirname,
      modules: [
        { type: "ESModule", path: join(import.meta.dirname, "floor-worker.js") },
        ...["setup.js", "argon2id.js", "blake2b.js"].map((file) => ({
          type: "ESModule",
          path: join(import.meta.dirname, "argon2", file),
          contents: readFileSync(join("node_modules", "argon2id", "lib", file)),
        })),
        {
          type: "CompiledWasm",
          path: join(import.meta.dirname, "argon2", "simd.wasm"),
          contents: readFileSync(join("node_modules", "argon2id", "dist", "simd.wasm")),
        },
      ],
      compatibilityDate: "2026-11-01",
      d1Databases: ["DB"],
      r2Buckets: ["FILES"],
      durableObjects: { PROBE: { className: "Probe", useSQLite: true } },
      ratelimits: { LIMITER: { namespace_id: "1001", simple: { limit: 100_000_000, period: 60 } } },
    }),
  );
}

/**
 * autocannon options for refreshes that really rotate: each request takes a live refresh token from `pool` and its
 * answer puts the successor back (autocannon resets per-client context between requests, so the pool is shared).
 * `onFailure(status, body)` hears of any answer that is not a 200.
 */
export function rotatingRefresh(base, pool, onFailure = () => {}, extra = {}) {
  return {
    url: `${base}/token`,
    requests: [
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        setupRequest: (request) => ({
          ...request,
          body: JSON.stringify({ refreshToken: pool.shift(), ...extra }),
        }),
        onResponse: (status, body) => {
          if (status === 200) pool.push(JSON.parse(body).refreshToken);
          else onFailure(status, body);
        },
      },
    ],
  };
}

export async function applyMigrations(mf) {
  for (const shard of SHARDS) {
    const db = await mf.getD1Database(shard);
    for (const file of readdirSync("migrations")
      .filter((f) => f.endsWith(".sql"))
      .sort()) {
      const statements = readFileSync(join("migrations", file), "utf8")
        .split("--> statement-breakpoint")
        .map((s) => s.trim())
        .filter(Boolean);
      await db.batch(statements.map((sql) => db.prepare(sql)));
    }
  }
}

/**
 * Runs one scenario. Every answer is counted by status: a scenario succeeds only if all of them are 2xx, or the
 * statuses it names in `expectStatuses` (the conditional-request scenario expects 304).
 */
export function run(name, { expectStatuses, ...options }) {
  const length = options.amount ? `${options.amount} requests` : `${options.duration ?? DURATION}s`;
  process.stderr.write(
    `running ${name} for ${length} at ${options.connections ?? CONNECTIONS} connections…\n`,
  );
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, duration: DURATION, ...options }, (error, result) => {
      if (error) return reject(error);
      const statuses = Object.fromEntries(
        Object.entries(result.statusCodeStats ?? {}).map(([status, { count }]) => [status, count]),
      );
      const expected = (status) =>
        expectStatuses ? expectStatuses.includes(status) : status >= 200 && status < 300;
      const unexpected = Object.entries(statuses)
        .filter(([status]) => !expected(Number(status)))
        .reduce((sum, [, count]) => sum + count, 0);
      resolve({
        name,
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        total: result.requests.total,
        // The measured length of the run (bench/paired.mjs adds up short ones: requests over seconds).
        seconds: result.duration,
        statuses,
        failures: unexpected + result.errors + result.timeouts,
        errors: result.errors,
        timeouts: result.timeouts,
      });
    });
  });
}

/**
 * After the tables: every scenario that had an unexpected answer, with its status counts, and a non-zero exit code
 * (`npm run bench` fails on any non-2xx answer).
 */
export function failOnUnexpectedAnswers(results) {
  const failed = results.filter((r) => r.failures > 0);
  if (failed.length === 0) {
    console.log(
      `\nall ${results.length} scenarios: every answer as expected (2xx, or the 304 scenario's 304)`,
    );
    return;
  }
  console.log("\nscenarios with unexpected answers (status → count):");
  for (const r of failed) {
    console.log(`  ${r.name}: ${JSON.stringify(r.statuses)}, errors ${r.errors}, timeouts ${r.timeouts}`);
  }
  process.exitCode = 1;
}

/** One line per result; `baselineOf(result)` names the result it is compared with (a ratio of req/s). */
export function printTable(title, results, baselineOf) {
  console.log(`\n${title}\n`);
  console.log(
    "scenario                                   req/s     p50 ms   p99 ms   vs baseline   requests  failures  statuses",
  );
  for (const r of results) {
    const baseline = baselineOf(r);
    console.log(
      `${r.name.padEnd(41)} ${r.rps.toFixed(0).padStart(7)} ${String(r.p50).padStart(9)} ${String(r.p99).padStart(8)} ${(r.rps / baseline.rps).toFixed(3).padStart(12)} ${String(r.total).padStart(10)} ${String(r.failures).padStart(9)}  ${Object.entries(
        r.statuses,
      )
        .map(([status, count]) => `${status}×${count}`)
        .join(" ")}`,
    );
  }
}
