// The side-by-side half of `npm run bench` (issue 31 §3): ours and better-auth 1.7.25 on the same runtime (workerd
// via Miniflare, local D1), each row run for ours then theirs, with the same autocannon settings, `BENCH_PEER_ROUNDS`
// rounds (default 2) in turn; then the same better-auth on Node (node:sqlite) as a cross-runtime line. Every row is
// printed as ours / theirs. What each side does per row is in docs/performance.md ("Issue 31").
// Standalone: `npm run bench:peer` (ours served as bench/run.mjs serves it, rate limits off).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  betterAuthWorker,
  bundle,
  bundleBetterAuth,
  CONNECTIONS,
  DURATION,
  failOnUnexpectedAnswers,
  PASSWORD,
  rotatingRefresh,
  run,
  serveOurs,
} from "./lib.mjs";
import { describeBetterAuthPeer, describeOurHasher } from "./peers/better-auth/describe.mjs";
import { EQUAL_SCRYPT } from "./peers/better-auth/equal-hasher.mjs";
import { BASE_PATH, EQUAL_BASE_PATH, EXTEND_BASE_PATH } from "./peers/better-auth/options.mjs";
import { betterAuthSchemaSql } from "./peers/better-auth/schema.mjs";

const ROUNDS = Number(process.env.BENCH_PEER_ROUNDS ?? 2);
const json = { "content-type": "application/json" };
/** better-auth refuses a POST without an Origin it trusts (its CSRF check), as a browser would send one. */
const ORIGIN = "http://127.0.0.1";
const theirJson = { ...json, origin: ORIGIN };
const SECRET = crypto
  .getRandomValues(new Uint8Array(32))
  .reduce((s, b) => s + b.toString(16).padStart(2, "0"), "");

/** A POST whose JSON body is made per request (a new email for each sign-up). */
function freshBody(url, makeBody, headers = json) {
  return {
    url,
    requests: [
      {
        method: "POST",
        headers,
        setupRequest: (request) => ({ ...request, body: JSON.stringify(makeBody()) }),
      },
    ],
  };
}

let emails = 0;
const nextEmail = (side) => `${side}-${process.pid}-${emails++}@example.com`;

/** Signs in `count` times: the cookies of that many sessions of one user. */
async function betterAuthSessions(origin, email, count) {
  const cookies = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${origin}${BASE_PATH}/sign-in/email`, {
      method: "POST",
      headers: theirJson,
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    if (!response.ok) throw new Error(`better-auth sign-in: ${response.status} ${await response.text()}`);
    const cookie = response.headers
      .getSetCookie()
      .map((line) => line.split(";")[0])
      .find((pair) => pair.startsWith("better-auth.session_token="));
    if (!cookie) throw new Error("better-auth sign-in set no session cookie");
    cookies.push(cookie);
  }
  return cookies;
}

/** better-auth at `origin`, a user signed up, and the rows of its side. */
async function theirRows(origin) {
  const email = `ba-user-${process.pid}@example.com`;
  const signUp = await fetch(`${origin}${BASE_PATH}/sign-up/email`, {
    method: "POST",
    headers: theirJson,
    body: JSON.stringify({ email, password: PASSWORD, name: "Bench" }),
  });
  if (!signUp.ok) throw new Error(`better-auth sign-up: ${signUp.status} ${await signUp.text()}`);
  const [cookie] = await betterAuthSessions(origin, email, 1);
  const pool = await betterAuthSessions(origin, email, CONNECTIONS * 2);
  let next = 0;
  return {
    "sign-up": freshBody(
      `${origin}${BASE_PATH}/sign-up/email`,
      () => ({
        email: nextEmail("ba"),
        password: PASSWORD,
        name: "Bench",
      }),
      theirJson,
    ),
    "sign-in": {
      url: `${origin}${BASE_PATH}/sign-in/email`,
      method: "POST",
      headers: theirJson,
      body: JSON.stringify({ email, password: PASSWORD }),
    },
    "session check": { url: `${origin}${BASE_PATH}/get-session`, headers: { cookie } },
    // updateAge 0: every read of the session extends it (one UPDATE of the same row) and sets the cookie again.
    refresh: {
      url: `${origin}${EXTEND_BASE_PATH}/get-session`,
      requests: [
        {
          method: "GET",
          setupRequest: (request) => ({
            ...request,
            headers: { ...request.headers, cookie: pool[next++ % pool.length] },
          }),
        },
      ],
    },
    "bare route": { url: `${origin}${BASE_PATH}/ok` },
  };
}

/**
 * Sign-up and sign-in of better-auth's instance whose passwords are hashed at OWASP's equal scrypt
 * (bench/peers/better-auth/equal-hasher.mjs): the comparison at equal strength (issue 48).
 */
async function theirEqualRows(origin) {
  const email = `ba-equal-${process.pid}@example.com`;
  const signUp = await fetch(`${origin}${EQUAL_BASE_PATH}/sign-up/email`, {
    method: "POST",
    headers: theirJson,
    body: JSON.stringify({ email, password: PASSWORD, name: "Bench" }),
  });
  if (!signUp.ok) throw new Error(`better-auth (equal) sign-up: ${signUp.status} ${await signUp.text()}`);
  return {
    "sign-up": freshBody(
      `${origin}${EQUAL_BASE_PATH}/sign-up/email`,
      () => ({ email: nextEmail("ba-equal"), password: PASSWORD, name: "Bench" }),
      theirJson,
    ),
    "sign-in": {
      url: `${origin}${EQUAL_BASE_PATH}/sign-in/email`,
      method: "POST",
      headers: theirJson,
      body: JSON.stringify({ email, password: PASSWORD }),
    },
  };
}

/** The rows measured against better-auth at equal strength too. */
const EQUAL_ROWS = ["sign-up", "sign-in"];

/** Our rows on an instance served by bench/run.mjs (`serve`: a user, a pool of refresh tokens). */
function ourRows({ base, email, session, pool }) {
  return {
    "sign-up": freshBody(`${base}/signup/email-password`, () => ({
      email: nextEmail("ours"),
      password: PASSWORD,
    })),
    "sign-in": {
      url: `${base}/signin/email-password`,
      method: "POST",
      headers: json,
      body: JSON.stringify({ email, password: PASSWORD }),
    },
    "session check": { url: `${base}/user`, headers: { authorization: `Bearer ${session.accessToken}` } },
    refresh: rotatingRefresh(base, pool),
    "bare route": { url: `${base}/healthz` },
  };
}

/** `BENCH_PEER_ROWS=session check,bare route`: those rows alone (issue 48's per-request overhead, a few minutes). */
const ROWS = (
  process.env.BENCH_PEER_ROWS?.split(",") ?? ["sign-up", "sign-in", "session check", "refresh", "bare route"]
).map((row) => row.trim());
const WHAT = {
  "sign-up":
    "ours POST /signup/email-password (argon2id, above) | theirs POST /sign-up/email (scrypt, above)",
  "sign-in": "ours POST /signin/email-password | theirs POST /sign-in/email",
  "session check": "ours GET /user (JWT) | theirs GET /get-session (cookie)",
  refresh: "ours POST /token rotates | theirs GET /get-session, updateAge 0, extends",
  "bare route": "ours GET /healthz | theirs GET /ok",
};

/** The better-auth Node server as a child process, on a SQLite file in `dir`. */
async function betterAuthOnNode(dir) {
  const child = spawn(
    process.execPath,
    [
      "--no-warnings",
      join(import.meta.dirname, "peers", "better-auth", "node-server.mjs"),
      join(dir, "ba-node.sqlite"),
    ],
    { env: { ...process.env, BETTER_AUTH_SECRET: SECRET }, stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  for await (const chunk of child.stdout) {
    out += chunk;
    const port = out.match(/listening (\d+)/)?.[1];
    if (port) return { origin: `http://127.0.0.1:${port}`, child };
  }
  throw new Error(`the better-auth Node server exited: ${out}`);
}

const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;

/** The floor row of bench/run.mjs that bounds each of our rows (what ours cannot go below on this machine). */
const FLOORS = {
  "sign-up": "floor: sign-in (one argon2id hash)",
  "sign-in": "floor: sign-in (one argon2id hash)",
  "session check": "floor: one D1 SELECT 1",
  refresh: "floor: refresh (DO write + D1 read + RS256)",
  "bare route": "floor: bare Worker, no logic",
};

/**
 * Runs the comparison against `ours` (an instance from bench/run.mjs's `serve`, rate limits off) and prints its
 * table; returns every result, for the caller's check that every answer was 2xx. `floors`: bench/run.mjs's results,
 * whose floor rows give each row's ceiling (the ratio ours would reach if it cost no more than its floor).
 */
export async function compareWithBetterAuth(ours, dir, floors = []) {
  bundleBetterAuth(join(dir, "build-better-auth"));
  const peer = betterAuthWorker(dir, "build-better-auth", {
    BETTER_AUTH_SECRET: SECRET,
    BETTER_AUTH_URL: ORIGIN,
  });
  const node = await betterAuthOnNode(dir);
  const all = [];
  try {
    const origin = (await peer.ready).origin;
    const db = await peer.getD1Database("DB");
    const schema = await betterAuthSchemaSql();
    await db.batch(schema.map((sql) => db.prepare(sql)));
    // Ours are built for each run (`ourRows`, below): the session they carry is renewed on the way.
    const sides = {
      theirs: await theirRows(origin),
      node: await theirRows(node.origin),
      equal: await theirEqualRows(origin),
    };
    const measured = Object.fromEntries(
      ROWS.map((row) => [row, { ours: [], theirs: [], node: [], equal: [] }]),
    );
    for (let round = 1; round <= ROUNDS; round++) {
      for (const row of ROWS) {
        const sidesOfRow = EQUAL_ROWS.includes(row)
          ? ["ours", "theirs", "equal", "node"]
          : ["ours", "theirs", "node"];
        for (const side of sidesOfRow) {
          const label = {
            ours: "ours",
            theirs: "better-auth, workerd",
            equal: "better-auth at OWASP-equal scrypt, workerd",
            node: "better-auth, Node",
          }[side];
          // Each run of our refresh spends the tokens in flight when it stops (bench/lib.mjs `topUp`).
          if (side === "ours" && row === "refresh") await ours.topUp();
          // The bench has run for longer than an access token lives by now: the session check gets a fresh one.
          if (side === "ours" && row === "session check") await ours.renewSession();
          const options = side === "ours" ? ourRows(ours)[row] : sides[side][row];
          const result = await run(`${row} (${label}, round ${round})`, options);
          measured[row][side].push(result);
          all.push(result);
        }
      }
    }
    // What was compared, read from what ran (issue 48): the peer's bundle and ours' password cost.
    console.log(
      `\n${[...describeBetterAuthPeer(join(dir, "build-better-auth")), describeOurHasher()].join("\n")}`,
    );
    console.log(
      `\nside by side with better-auth 1.7.25 (${CONNECTIONS} connections, ${DURATION}s per row, ${ROUNDS} rounds, mean req/s; p50/p99 ms of the last round)\n`,
    );
    console.log(
      "row              ours req/s  p50  p99 | better-auth workerd+D1  p50  p99 | ours/theirs | better-auth Node  ours/Node",
    );
    for (const row of ROWS) {
      const { ours: o, theirs: t, node: n } = measured[row];
      const [or, tr, nr] = [o, t, n].map((runs) => mean(runs.map((r) => r.rps)));
      const [ol, tl] = [o.at(-1), t.at(-1)];
      console.log(
        `${row.padEnd(16)} ${or.toFixed(1).padStart(10)} ${String(ol.p50).padStart(4)} ${String(ol.p99).padStart(4)} | ${tr.toFixed(1).padStart(22)} ${String(tl.p50).padStart(4)} ${String(tl.p99).padStart(4)} | ${`${(or / tr).toFixed(2)}×`.padStart(11)} | ${nr.toFixed(1).padStart(16)} ${`${(or / nr).toFixed(2)}×`.padStart(10)}`,
      );
    }
    const { N, r, p } = EQUAL_SCRYPT;
    const equalRows = EQUAL_ROWS.filter((row) => ROWS.includes(row));
    if (equalRows.length > 0)
      console.log(
        `\nat equal strength: better-auth with its hasher (node:crypto scrypt) at OWASP's equal N=2^${Math.log2(N)} r=${r} p=${p}, through its emailAndPassword.password option, on workerd + D1`,
      );
    for (const row of equalRows) {
      const [or, er] = ["ours", "equal"].map((side) => mean(measured[row][side].map((r) => r.rps)));
      const el = measured[row].equal.at(-1);
      console.log(
        `${row.padEnd(16)} ${or.toFixed(1).padStart(10)} | ${er.toFixed(1).padStart(8)} ${String(el.p50).padStart(5)} ${String(el.p99).padStart(5)} | ${`${(or / er).toFixed(2)}×`.padStart(8)}`,
      );
    }
    if (floors.length > 0) {
      console.log("\nceiling per row: our floor of this run (bench/run.mjs) / better-auth on workerd");
      for (const row of ROWS) {
        const floor = floors.find((r) => r.name === FLOORS[row]);
        if (!floor) continue;
        const theirs = mean(measured[row].theirs.map((r) => r.rps));
        console.log(
          `  ${row.padEnd(14)} ${FLOORS[row].padEnd(45)} ${floor.rps.toFixed(1).padStart(8)} req/s → ≤ ${(floor.rps / theirs).toFixed(2)}×`,
        );
      }
    }
    console.log("\nper row, what each side does:");
    for (const row of ROWS) console.log(`  ${row.padEnd(14)} ${WHAT[row]}`);
    console.log(
      `per-round req/s (ours / theirs / Node): ${ROWS.map((row) => `${row} ${["ours", "theirs", "node"].map((side) => measured[row][side].map((r) => r.rps.toFixed(0)).join(",")).join(" / ")}`).join("; ")}`,
    );
  } finally {
    node.child.kill();
    await once(node.child, "exit").catch(() => {});
    await peer.dispose();
  }
  return all;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dir = mkdtempSync(join(tmpdir(), "edge-auth-peer-"));
  try {
    bundle(join(dir, "build"));
    const ours = await serveOurs(dir, false);
    try {
      failOnUnexpectedAnswers(await compareWithBetterAuth(ours, dir));
    } finally {
      await ours.mf.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
