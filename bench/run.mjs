// `npm run bench`: serves the bundled Worker with Miniflare's API (workerd directly, local D1/DO; not the
// `wrangler dev` proxy, which caps local throughput), drives it with autocannon on loopback, and prints each
// scenario next to a bare route of the same Worker measured in the same run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSecrets } from "../scripts/secrets.mjs";
import {
  applyMigrations,
  bundle,
  CONNECTIONS,
  DURATION,
  floorWorker,
  printTable,
  run,
  workerFromBundle,
} from "./lib.mjs";

const PASSWORD = "benchmark password";

async function post(base, path, body, token) {
  const headers = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

const dir = mkdtempSync(join(tmpdir(), "edge-auth-bench-"));
bundle(join(dir, "build"));
// One client address drives thousands of requests: limits are switched off here (BENCH_RATE_LIMIT=on keeps them,
// with bursts raised so nothing is refused and their cost shows).
const mf = workerFromBundle(dir, {
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
});

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
  for (const [name, options] of scenarios) results.push(await run(name, options));

  const floor = floorWorker();
  try {
    const floorUrl = (await floor.ready).origin;
    for (const [name, path] of [
      ["floor: bare Worker, no logic", "/"],
      ["floor: one D1 SELECT 1", "/d1"],
      ["floor: one Durable Object call", "/do"],
      ["floor: refresh (DO write + D1 read + RS256)", "/refresh-floor"],
    ]) {
      results.push(await run(name, { url: `${floorUrl}${path}` }));
    }
  } finally {
    await floor.dispose();
  }

  printTable(
    `${CONNECTIONS} connections, ${DURATION}s per scenario, workerd via Miniflare on loopback`,
    results,
    () => results[0],
  );
} finally {
  await mf.dispose();
  rmSync(dir, { recursive: true, force: true });
}
