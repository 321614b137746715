// `npm run bench`: serves the bundled Worker with Miniflare's API (workerd directly, local D1/DO; not the
// `wrangler dev` proxy, which caps local throughput), drives it with autocannon on loopback, and prints each
// scenario next to a bare route of the same Worker measured in the same run.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { convertV4MiniflareOptions, Log, LogLevel, Miniflare } from "miniflare";
import { generateSecrets } from "../scripts/secrets.mjs";

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const PASSWORD = "benchmark password";

function bundle(outdir) {
  const wrangler = join("node_modules", "wrangler", "bin", "wrangler.js");
  execFileSync(process.execPath, [wrangler, "deploy", "--dry-run", "--outdir", outdir], {
    stdio: "pipe",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
}

async function applyMigrations(mf) {
  const db = await mf.getD1Database("DB");
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

async function post(base, path, body, token) {
  const headers = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

function run(name, options) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, duration: DURATION, ...options }, (error, result) => {
      if (error) return reject(error);
      const failures = result.non2xx + result.errors + result.timeouts;
      resolve({
        name,
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        total: result.requests.total,
        failures,
      });
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), "edge-auth-bench-"));
bundle(join(dir, "build"));
// Miniflare 5 takes a new options shape; the converter accepts the familiar v4 one.
const mf = new Miniflare(
  convertV4MiniflareOptions({
    log: new Log(LogLevel.WARN),
    host: "127.0.0.1",
    port: 0,
    modulesRoot: join(dir, "build"),
    modules: readdirSync(join(dir, "build"))
      .filter((file) => file.endsWith(".js") || file.endsWith(".wasm"))
      .sort((a) => (a === "index.js" ? -1 : 1))
      .map((file) => ({
        type: file.endsWith(".wasm") ? "CompiledWasm" : "ESModule",
        path: join(dir, "build", file),
      })),
    compatibilityDate: "2026-11-01",
    compatibilityFlags: ["nodejs_compat"],
    d1Databases: ["DB"],
    durableObjects: {
      REFRESH_SESSIONS: { className: "RefreshSession", useSQLite: true },
      CODE_CHALLENGES: { className: "CodeChallenge", useSQLite: true },
      RATE_LIMITERS: { className: "RateLimiter", useSQLite: true },
      WEBAUTHN_CHALLENGES: { className: "WebauthnChallenge", useSQLite: true },
    },
    defaultPersistRoot: join(dir, "state"),
    // One client address drives thousands of requests: limits are switched off here (BENCH_RATE_LIMIT=on keeps
    // them, with bursts raised so nothing is refused and their cost shows).
    bindings: {
      ...generateSecrets(),
      AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false",
      ...(process.env.BENCH_RATE_LIMIT === "on"
        ? Object.fromEntries(
            ["GLOBAL", "BRUTE_FORCE", "REFRESH", "SIGNUPS", "EMAIL"].map((b) => [
              `AUTH_RATE_LIMIT_${b}_BURST`,
              "100000000",
            ]),
          )
        : { AUTH_RATE_LIMIT_ENABLE: "false" }),
    },
  }),
);

try {
  const url = await mf.ready;
  const base = `${url.origin}/auth/v1`;
  await applyMigrations(mf);

  const email = "bench@example.com";
  const { session } = await post(base, "/signup/email-password", { email, password: PASSWORD });
  // Live refresh tokens, one per session: a request takes one and its answer puts the successor back, so every
  // refresh really rotates. (autocannon resets per-client context between requests, so the pool is shared.)
  const pool = [];
  for (let i = 0; i < CONNECTIONS * 2; i++) {
    pool.push(
      (await post(base, "/signin/email-password", { email, password: PASSWORD })).session.refreshToken,
    );
  }
  const json = { "content-type": "application/json" };
  const bearer = { authorization: `Bearer ${session.accessToken}` };
  const signInBody = JSON.stringify({ email, password: PASSWORD });

  let refreshFailures = 0;
  const results = [];
  const scenarios = [
    ["baseline: GET /healthz", { url: `${base}/healthz` }],
    ["getUser: GET /user", { url: `${base}/user`, headers: bearer }],
    [
      "verifyToken: POST /token/verify",
      { url: `${base}/token/verify`, method: "POST", headers: { ...json, ...bearer } },
    ],
    [
      "refresh (rotating): POST /token",
      {
        url: `${base}/token`,
        requests: [
          {
            method: "POST",
            headers: json,
            setupRequest: (request) => ({ ...request, body: JSON.stringify({ refreshToken: pool.shift() }) }),
            onResponse: (status, body) => {
              if (status === 200) pool.push(JSON.parse(body).refreshToken);
              else if (refreshFailures++ === 0) process.stderr.write(`refresh failed: ${status} ${body}\n`);
            },
          },
        ],
      },
    ],
    [
      "sign-in: POST /signin/email-password",
      { url: `${base}/signin/email-password`, method: "POST", headers: json, body: signInBody },
    ],
  ];
  for (const [name, options] of scenarios) {
    process.stderr.write(`running ${name} for ${DURATION}s at ${CONNECTIONS} connections…\n`);
    results.push(await run(name, options));
  }

  const floor = new Miniflare(
    convertV4MiniflareOptions({
      log: new Log(LogLevel.WARN),
      host: "127.0.0.1",
      port: 0,
      modules: true,
      scriptPath: join(import.meta.dirname, "floor-worker.js"),
      compatibilityDate: "2026-11-01",
      d1Databases: ["DB"],
      durableObjects: { PROBE: { className: "Probe", useSQLite: true } },
    }),
  );
  try {
    const floorUrl = (await floor.ready).origin;
    for (const [name, path] of [
      ["floor: bare Worker, no logic", "/"],
      ["floor: one D1 SELECT 1", "/d1"],
      ["floor: one Durable Object call", "/do"],
    ]) {
      process.stderr.write(`running ${name}…\n`);
      results.push(await run(name, { url: `${floorUrl}${path}` }));
    }
  } finally {
    await floor.dispose();
  }

  const baseline = results[0].rps;
  console.log(`\n${CONNECTIONS} connections, ${DURATION}s per scenario, workerd via Miniflare on loopback\n`);
  console.log(
    "scenario                              req/s     p50 ms   p99 ms   vs baseline   requests  failures",
  );
  for (const r of results) {
    console.log(
      `${r.name.padEnd(36)} ${r.rps.toFixed(0).padStart(7)} ${String(r.p50).padStart(9)} ${String(r.p99).padStart(8)} ${(r.rps / baseline).toFixed(3).padStart(12)} ${String(r.total).padStart(10)} ${String(r.failures).padStart(9)}`,
    );
  }
} finally {
  await mf.dispose();
  rmSync(dir, { recursive: true, force: true });
}
