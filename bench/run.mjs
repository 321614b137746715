// `npm run bench`: serves the bundled Worker with Miniflare's API (workerd directly, local D1/DO; not the
// `wrangler dev` proxy, which caps local throughput), drives it with autocannon on loopback, and prints each
// scenario next to a bare route of the same Worker measured in the same run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compareWithBetterAuth } from "./better-auth.mjs";
import {
  bundle,
  CONNECTIONS,
  DURATION,
  failOnUnexpectedAnswers,
  floorWorker,
  PASSWORD,
  post,
  printTable,
  rotatingRefresh,
  run,
  serveOurs as serve,
} from "./lib.mjs";
import { paired, printPairs, ROUNDS } from "./paired.mjs";
import { measureBindings } from "./workers.mjs";

let refreshFailures = 0;
let cryptoCosts = {};
const json = { "content-type": "application/json" };

/** The session scenarios of one instance, named with `suffix`. */
function sessionScenarios({ base, session, pool }, suffix) {
  const bearer = { authorization: `Bearer ${session.accessToken}` };
  return [
    [`baseline: GET /healthz${suffix}`, { url: `${base}/healthz` }],
    [`getUser: GET /user${suffix}`, { url: `${base}/user`, headers: bearer }],
    [
      `verifyToken: POST /token/verify${suffix}`,
      { url: `${base}/token/verify`, method: "POST", headers: { ...json, ...bearer } },
    ],
    [
      `refresh (rotating): POST /token${suffix}`,
      rotatingRefresh(base, pool, (status, body) => {
        if (refreshFailures++ === 0) process.stderr.write(`refresh failed: ${status} ${body}\n`);
      }),
    ],
  ];
}

/** The bench user's own organization, and refreshes that keep switching the session into it. */
async function orgSwitch({ base, session, pool, topUp }) {
  const created = await fetch(`${base}/orgs`, {
    method: "POST",
    headers: { ...json, authorization: `Bearer ${session.accessToken}` },
    body: JSON.stringify({ name: "Bench org" }),
  });
  if (created.status !== 201)
    throw new Error(`creating the bench org: ${created.status} ${await created.text()}`);
  const { id } = await created.json();
  await topUp();
  const failed = (status, body) => {
    if (refreshFailures++ === 0) process.stderr.write(`org switch failed: ${status} ${body}\n`);
  };
  return ["refresh into an org: POST /token {orgId}", rotatingRefresh(base, pool, failed, { orgId: id })];
}

const signIn = ({ base, email }, suffix = "") => [
  `sign-in: POST /signin/email-password${suffix}`,
  {
    url: `${base}/signin/email-password`,
    method: "POST",
    headers: json,
    body: JSON.stringify({ email, password: PASSWORD }),
  },
];

/** autocannon options for refreshes through `pool`, its body made by `bodyOf(token)`, its next token by `next(answer)`. */
function refreshesThrough(url, headers, pool, bodyOf, next) {
  return {
    url,
    requests: [
      {
        method: "POST",
        headers,
        setupRequest: (request) => ({ ...request, body: JSON.stringify(bodyOf(pool.shift())) }),
        onResponse: (status, body) => {
          if (status === 200) pool.push(next(JSON.parse(body)));
          else if (refreshFailures++ === 0) process.stderr.write(`refresh failed: ${status} ${body}\n`);
        },
      },
    ],
  };
}

/**
 * The Supabase face's sign-in, refresh and getUser (GoTrue's paths, supabase-js's bodies), each paired with the Nhost
 * face's path doing the same thing, on the same instance and account (bench/paired.mjs runs each pair interleaved):
 * the face may add no query and no object call (issue 43). getUser's counterpart is the Nhost `GET /user`: one
 * primary-key read of the user, where the face's is one read of the session joined with its user (GoTrue's session
 * check); the Nhost face has no route that reads the session on a GET (docs/decisions.md, "Issue 43: the face's
 * speed"). Each refresh side has its own pool of fresh sessions, in no organization.
 */
async function facePairs({ base, email, session, secrets }) {
  const face = `${new URL(base).origin}/supabase/auth/v1`;
  const apikey = { apikey: secrets.AUTH_SUPABASE_PUBLISHABLE_KEYS, ...json };
  const password = JSON.stringify({ email, password: PASSWORD });
  const faceSignIn = async () => {
    const answer = await fetch(`${face}/token?grant_type=password`, {
      method: "POST",
      headers: apikey,
      body: password,
    });
    if (answer.status !== 200) throw new Error(`face sign-in: ${answer.status} ${await answer.text()}`);
    return answer.json();
  };
  const nhostSignIn = async () =>
    (await post(base, "/signin/email-password", { email, password: PASSWORD })).session;
  const first = await faceSignIn();
  const [facePool, nhostPool] = [[], []];
  // Topped up before each slice: a slice ends with requests in flight whose successors are lost.
  const topUp = (pool, signIn, tokenOf) => async () => {
    while (pool.length < CONNECTIONS * 2) pool.push(tokenOf(await signIn()));
  };
  return [
    [
      {
        name: "getUser: GET /user",
        options: { url: `${base}/user`, headers: { authorization: `Bearer ${session.accessToken}` } },
      },
      {
        name: "face getUser: GET /supabase/auth/v1/user",
        options: {
          url: `${face}/user`,
          headers: { ...apikey, authorization: `Bearer ${first.access_token}` },
        },
      },
    ],
    [
      {
        name: "refresh (rotating): POST /token",
        options: refreshesThrough(
          `${base}/token`,
          json,
          nhostPool,
          (refreshToken) => ({ refreshToken }),
          (s) => s.refreshToken,
        ),
        before: topUp(nhostPool, nhostSignIn, (s) => s.refreshToken),
      },
      {
        name: "face refresh: POST /supabase/auth/v1/token",
        options: refreshesThrough(
          `${face}/token?grant_type=refresh_token`,
          apikey,
          facePool,
          (refresh_token) => ({ refresh_token }),
          (s) => s.refresh_token,
        ),
        before: topUp(facePool, faceSignIn, (s) => s.refresh_token),
      },
    ],
    [
      { name: signIn({ base, email })[0], options: signIn({ base, email })[1] },
      {
        name: "face sign-in: POST /supabase/auth/v1/token",
        options: {
          url: `${face}/token?grant_type=password`,
          method: "POST",
          headers: apikey,
          body: password,
        },
      },
    ],
  ];
}

/** The rows that sign (refresh, sign-in) and the one that verifies (getUser), with another signing algorithm. */
const FAST_ALGORITHMS = ["EdDSA", "ES256"];

const dir = mkdtempSync(join(tmpdir(), "edge-auth-bench-"));
bundle(join(dir, "build"));
const off = await serve(dir, false);
const on = await serve(dir, true);
const byAlgorithm = {};
for (const alg of FAST_ALGORITHMS) byAlgorithm[alg] = await serve(dir, false, alg);

/**
 * `BENCH_ONLY=face`: the Supabase face's pairs alone (issue 43's rows, a few minutes instead of eight), for measuring
 * them again on a quiet machine without the rest of the bench.
 */
async function facePairsOnly() {
  const pairs = [];
  for (const [nhost, face] of await facePairs(off)) pairs.push(await paired(nhost, face));
  printPairs(
    `the Supabase face (b) against the Nhost face (a), interleaved: ${ROUNDS} slices of ${((2 * DURATION) / ROUNDS).toFixed(2)} s each side (issue 43: ≥ 0.95 each)`,
    pairs,
    0.95,
  );
  failOnUnexpectedAnswers(pairs.flatMap(({ a, b }) => [a, b]));
}

try {
  if (process.env.BENCH_ONLY === "face") {
    await facePairsOnly();
  } else await everything();
} finally {
  await off.mf.dispose();
  await on.mf.dispose();
  for (const alg of FAST_ALGORITHMS) await byAlgorithm[alg].mf.dispose();
  rmSync(dir, { recursive: true, force: true });
}

async function everything() {
  const results = [];
  for (const [name, options] of sessionScenarios(off, "")) results.push(await run(name, options));
  results.push(await run(...signIn(off)));
  // A refresh that switches into an organization (contract organizations.md §1): the token's object looked up once
  // before the rotation, the membership and the session read once (src/auth/sessions/before-rotation.ts).
  results.push(await run(...(await orgSwitch(off))));
  // Each face row against its Nhost row, interleaved in short slices (bench/paired.mjs).
  const pairs = [];
  for (const [nhost, face] of await facePairs(off)) pairs.push(await paired(nhost, face));
  const limited = [];
  for (const [name, options] of sessionScenarios(on, ", limits on")) limited.push(await run(name, options));
  const algorithms = [];
  for (const alg of FAST_ALGORITHMS) {
    const [, getUser, , refresh] = sessionScenarios(byAlgorithm[alg], `, ${alg}`);
    for (const [name, options] of [getUser, refresh, signIn(byAlgorithm[alg], `, ${alg}`)]) {
      algorithms.push(await run(name, options));
    }
  }

  // Issue 45: the service binding and check, from a consumer Worker beside the service (bench/workers.mjs).
  const bindings = await measureBindings(dir);

  const floor = floorWorker();
  try {
    const floorUrl = (await floor.ready).origin;
    for (const [name, path] of [
      ["floor: bare Worker, no logic", "/"],
      ["floor: one D1 SELECT 1", "/d1"],
      ["floor: one Durable Object call", "/do"],
      ["floor: one Rate Limiting binding call", "/ratelimit"],
      ["floor: refresh (DO write + D1 read + RS256)", "/refresh-floor?alg=RS256"],
      ["floor: refresh (DO write + D1 read + EdDSA)", "/refresh-floor?alg=EdDSA"],
      ["floor: refresh (DO write + D1 read + ES256)", "/refresh-floor?alg=ES256"],
      ["floor: sign-in (one argon2id hash)", "/argon2id"],
    ]) {
      results.push(await run(name, { url: `${floorUrl}${path}` }));
    }
    cryptoCosts = await (await fetch(`${floorUrl}/crypto-cost`)).json();
  } finally {
    await floor.dispose();
  }

  printTable(
    `${CONNECTIONS} connections, ${DURATION}s per scenario, workerd via Miniflare on loopback, rate limits off`,
    results,
    () => results[0],
  );
  printTable(
    "the same scenarios with rate limits on, each against its limits-off run above",
    limited,
    (r) => results[limited.indexOf(r)],
  );
  printTable(
    "access tokens signed with EdDSA and ES256 (an RSA key beside, for ID tokens), each against the RS256 row above",
    algorithms,
    (r) => results.find((base) => base.name.split(":")[0] === r.name.split(":")[0]),
  );
  printPairs(
    `the Supabase face (b) against the Nhost face (a), interleaved: ${ROUNDS} slices of ${((2 * DURATION) / ROUNDS).toFixed(2)} s each side (issue 43: ≥ 0.95 each)`,
    pairs,
    0.95,
  );
  bindings.print();
  const rps = (name) =>
    [...results, ...algorithms].find((r) => r.name === name || r.name.startsWith(name)).rps;
  const target = (label, measured, floorName, goal) => {
    const ratio = rps(measured) / rps(floorName);
    console.log(
      `${label.padEnd(34)} ${ratio.toFixed(3)}  (target ≥ ${goal}${ratio >= goal ? ", met" : ", missed"})`,
    );
  };
  console.log("\nagainst the floors of the same run (issue 23's targets):");
  target("getUser / one D1 SELECT 1", "getUser: GET /user", "floor: one D1 SELECT 1", 0.9);
  for (const alg of ["RS256", ...FAST_ALGORITHMS]) {
    const suffix = alg === "RS256" ? "" : `, ${alg}`;
    target(
      `refresh (${alg}) / its floor`,
      `refresh (rotating): POST /token${suffix}`,
      `floor: refresh (DO write + D1 read + ${alg})`,
      0.9,
    );
  }
  for (const alg of ["RS256", ...FAST_ALGORITHMS]) {
    const suffix = alg === "RS256" ? "" : `, ${alg}`;
    target(
      `sign-in (${alg}) / argon2id floor`,
      `sign-in: POST /signin/email-password${suffix}`,
      "floor: sign-in (one argon2id hash)",
      0.9,
    );
  }
  const user = results.find((r) => r.name.startsWith("getUser"));
  console.log(`getUser p99 / p50:                 ${(user.p99 / user.p50).toFixed(1)} (target ≤ 4)`);
  console.log("\nCPU per operation in this workerd (200 of each, in one request; WebCrypto, BoringSSL):");
  for (const [alg, { signMs, verifyMs }] of Object.entries(cryptoCosts)) {
    console.log(
      `${alg.padEnd(6)} sign ${(signMs * 1000).toFixed(0).padStart(5)} µs   verify ${(verifyMs * 1000).toFixed(0).padStart(5)} µs`,
    );
  }
  if (refreshFailures > 0) console.log(`refresh failures: ${refreshFailures}`);
  // Issue 31 §3: better-auth on the same runtime, row by row against the limits-off instance.
  const peer = process.env.BENCH_PEER === "off" ? [] : await compareWithBetterAuth(off, dir, results);
  failOnUnexpectedAnswers([
    ...results,
    ...pairs.flatMap(({ a, b }) => [a, b]),
    ...limited,
    ...algorithms,
    ...bindings.results,
    ...peer,
  ]);
}
