// `npm run bench:latency` (issue 31 §4): the hot paths the way production sees them. The Worker is bundled from
// bench/latency-entry.ts, which wraps every storage binding with a delay per round trip and records each call;
// this script drives each path under each delay profile and prints its p50/p99 with its SEQUENTIAL round trips per
// binding (calls that overlap count once: one wave), before the answer and after it (waitUntil), against the issue's
// budgets. Rate limits are on (as in production, bursts raised so nothing is refused); their Rate Limiting binding
// calls are counted but not delayed (the platform counts in the location that serves the request).
//
// The profiles (milliseconds per round trip, bench/latency-entry.ts PROFILES), from ../shared/scaling-facts.md and
// docs/scaling.md: D1 "indexed point reads take under 1 ms", writes "several milliseconds" as they are made durable
// in several places (scaling-facts §1), so a write costs 2 ms more than a read at the primary; a read replica runs
// in every region (§1, read replication) so a nearby one is ~2 ms away; a primary, an object created elsewhere or a
// KV write (central) is a cross-region trip, ~80 ms; docs/scaling.md's "a user 150 ms from the primary" is the far
// end of that.
//   same-colo                 D1 replica 1, primary read 1, primary write 3, DO 1, KV 1, R2 1, queue 1
//   replica-near-primary-far  D1 replica 2, primary read 80, primary write 83, DO 40, KV read 2 / write 80, R2 40,
//                             queue 40
//   all-distant               everything 80 (primary writes 83)
//
// One connection by default (`BENCH_LATENCY_CONNECTIONS`): the p50 is then one request's own time, not a queue
// behind argon2id on this machine's one workerd thread; `BENCH_LATENCY_SECONDS` (default 5) per path and profile.
//
// Besides the HTTP paths: the service binding's `authenticate` from a consumer Worker in the same workerd
// (bench/latency-binding.mjs) and a SAML sign-in's ACS, its POST and its GET, answered by the tests' real IdP
// (bench/latency-saml.mjs); the ACS rows, like the code exchange, spend `BENCH_LATENCY_CODES` sign-ins a profile.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bindingConsumer, bindingPaths } from "./latency-binding.mjs";
import { samlConnection, samlIdp, samlPaths, samlSignIns, samlWarmUp } from "./latency-saml.mjs";
import {
  bundle,
  failOnUnexpectedAnswers,
  PASSWORD,
  post,
  rotatingRefresh,
  run,
  SHARDS,
  serveOurs,
} from "./lib.mjs";
import { freePort } from "./workers.mjs";

const PROFILES = ["same-colo", "replica-near-primary-far", "all-distant"];
const CONNECTIONS = Number(process.env.BENCH_LATENCY_CONNECTIONS ?? 1);
const SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 5);
/** Authorization codes made before each profile's exchange row (each is single use). */
const CODES = Number(process.env.BENCH_LATENCY_CODES ?? 40);
const REDIRECT_URI = "https://rp.example.com/callback";
const VERIFIER = `bench-verifier-${"v".repeat(40)}`;
const json = { "content-type": "application/json" };

/**
 * A sign-in by email with several shards first asks the directory which shard holds the account: a wave no layout of
 * one database has, counted on top of the issue's two (docs/performance.md, "Issue 48: round trips").
 */
const DIRECTORY = SHARDS.length > 1 ? 1 : 0;
const SIGN_IN_BUDGET = DIRECTORY ? "≤ 2 besides the hash and the directory" : "≤ 2 besides the hash";

/** The issue's budgets: sequential round trips before the answer, besides the password hash. */
const BUDGETS = {
  "session check": {
    text: "0 (GET /user: at most 1 replica read)",
    met: (s) => s.sequential <= 1 && only(s, "d1-replica"),
  },
  refresh: { text: "1 wave (the object, the read beside)", met: (s) => s.sequential <= 1 },
  // The rotation records the switch while the membership is read beside it: by the token's locator where the user's
  // sessions are in the home database (`org_members`' database), by the token's slot elsewhere (docs/decisions.md,
  // "Issue 48: the org switch in one wave", "… a refresh in an org in one wave").
  "org switch": { text: "1 wave, as refresh", met: (s) => s.sequential <= 1 },
  // A plain refresh of a session in an org, whose token says so: every membership of the locator's users read beside
  // the rotation in the home database; elsewhere the membership the home database's hint of the session names
  // (`org_session_hints`, written after the pool's switch; docs/decisions.md, "… a refresh in an org in one wave,
  // elsewhere").
  "refresh in an org": { text: "1 wave, as refresh", met: (s) => s.sequential <= 1 },
  // The same two with a second user's sessions in the shard the bench user is not in (`BENCH_SHARDS=2` only), so
  // that every run measures both placements: the home database's (read by locator) and another's (by slot, by hint).
  "org switch, other shard": { text: "1 wave, as refresh", met: (s) => s.sequential <= 1 },
  "refresh in an org, other shard": { text: "1 wave, as refresh", met: (s) => s.sequential <= 1 },
  "Supabase refresh": { text: "1 wave, as refresh", met: (s) => s.sequential <= 1 },
  "sign-in": { text: SIGN_IN_BUDGET, met: (s) => s.sequential <= 2 + DIRECTORY },
  "Supabase sign-in": { text: SIGN_IN_BUDGET, met: (s) => s.sequential <= 2 + DIRECTORY },
  "OAuth2 code exchange": { text: "≤ 2", met: (s) => s.sequential <= 2 },
  JWKS: { text: "0 (cached key set)", met: (s) => s.sequential === 0 },
  "sign-up": { text: "(none set)", met: () => null },
  // docs/workers.md "Costs": a signature check with the isolate's cached key set, no storage at all (the key set's
  // read every 10 s per isolate shows as an "also seen" shape, shared by every call it serves).
  "RPC authenticate": { text: "0 (a JWT's signature, cached keys)", met: (s) => s.sequential === 0 },
  // `live`: the session's family object says whether it stands, and nothing else is read.
  "RPC authenticate live": {
    text: "1 object call (the session's family)",
    met: (s) => s.sequential <= 1 && only(s, "do"),
  },
  // The ACS's POST: the connection's settings (its certificates), then, once the signature holds, the assertion ID
  // spent (an insert that conflicts on a replay) and the identity kept on the pending sign-in, one D1 batch: 2.
  "SAML ACS (POST)": {
    text: "≤ 2 (connection; ID spent + result kept, one batch)",
    met: (s) => s.sequential <= 2,
  },
  // The ACS's GET: the result taken (once) beside the connection; the email's domain, the user, the membership and
  // the factors, read with only the email and the org; the session written beside the family's start: 3.
  "SAML ACS (GET)": { text: "≤ 3 (take ∥ connection; user; session)", met: (s) => s.sequential <= 3 },
};
/** The user's slot (src/db/shards.ts `slotOfUser`: the first 12 bits of SHA-256 of the id) → its shard's index. */
const shardIndexOfUser = (userId) => {
  const digest = createHash("sha256").update(userId.toLowerCase()).digest();
  return Math.floor((((digest[0] << 4) | (digest[1] >> 4)) * SHARDS.length) / 4096);
};
/**
 * A user whose sessions are in another shard than `shardIndex`'s, added to `SWITCH_ORG` as a member (signed up with
 * new addresses until one lands there: each shard holds half of the slots).
 */
async function memberInOtherShard(ours, shardIndex) {
  for (let i = 0; i < 64; i++) {
    const email = `latency-other-${i}-${Date.now()}@example.com`;
    const { session } = await post(ours.base, "/signup/email-password", { email, password: PASSWORD });
    if (shardIndexOfUser(session.user.id) === shardIndex) continue;
    const response = await fetch(`${ours.base}/admin/orgs/${SWITCH_ORG}/members`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-hasura-admin-secret": ours.secrets.AUTH_ADMIN_SECRET,
      },
      body: JSON.stringify({ userId: session.user.id, role: "member" }),
    });
    if (!response.ok) throw new Error(`adding the other member: ${response.status} ${await response.text()}`);
    return { id: session.user.id, email };
  }
  throw new Error("no user landed in the other shard in 64 sign-ups");
}

/** The org switch row's pool: sessions of the bench user, each switched into `SWITCH_ORG` again and again. */
const SWITCH_POOL = [];
/** The "refresh in an org" row's pool: sessions of the bench user switched into `SWITCH_ORG` once, then refreshed. */
const IN_ORG_POOL = [];
let SWITCH_ORG;
/** With two shards: a member of `SWITCH_ORG` whose sessions are in the other shard, and its two pools. */
let OTHER_MEMBER;
const OTHER_SWITCH_POOL = [];
const OTHER_IN_ORG_POOL = [];

const only = (shape, kind) =>
  shape.perKind.every((entry) => entry.startsWith(kind) || entry.startsWith("limiter"));

function bundleLatencyEntry(outdir) {
  const wrangler = join("node_modules", "wrangler", "bin", "wrangler.js");
  execFileSync(
    process.execPath,
    [wrangler, "deploy", join("bench", "latency-entry.ts"), "--dry-run", "--outdir", outdir],
    { stdio: "pipe", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
  );
}

async function control(origin, path) {
  const response = await fetch(`${origin}/__latency/${path}`);
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** A confidential OAuth2 client through the admin API. */
async function newClient(base, adminSecret) {
  const response = await fetch(`${base}/admin/oauth2/clients`, {
    method: "POST",
    headers: { ...json, "x-hasura-admin-secret": adminSecret },
    body: JSON.stringify({
      clientName: "Bench",
      redirectUris: [REDIRECT_URI],
      scopes: ["openid", "profile", "email"],
    }),
  });
  if (response.status !== 201) throw new Error(`client: ${response.status} ${await response.text()}`);
  return response.json();
}

async function s256(verifier) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return Buffer.from(digest).toString("base64url");
}

/** `count` authorization codes of the user behind `accessToken`: authorize, then the JSON login step (PKCE S256). */
async function codes(base, client, accessToken, count) {
  const challenge = await s256(VERIFIER);
  const out = [];
  for (let i = 0; i < count; i++) {
    const query = new URLSearchParams({
      client_id: client.clientId,
      redirect_uri: REDIRECT_URI,
      response_type: "code",
      scope: "openid profile email",
      state: `s${i}`,
      nonce: `n${i}`,
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    const authorized = await fetch(`${base}/oauth2/authorize?${query}`, { redirect: "manual" });
    const requestId = new URL(authorized.headers.get("location") ?? "http://x/").searchParams.get(
      "request_id",
    );
    if (!requestId) throw new Error(`authorize: ${authorized.status} ${await authorized.text()}`);
    const login = await fetch(`${base}/oauth2/login`, {
      method: "POST",
      headers: { ...json, authorization: `Bearer ${accessToken}` },
      body: JSON.stringify({ requestId }),
    });
    if (!login.ok) throw new Error(`login: ${login.status} ${await login.text()}`);
    out.push(new URL((await login.json()).redirectUri).searchParams.get("code"));
  }
  return out;
}

let emails = 0;

/** The Supabase face's password grant and refresh grant (supabase-js's bodies), its own pool of sessions. */
const FACE_POOL = [];
async function faceSignIn(ours) {
  const face = `${new URL(ours.base).origin}/supabase/auth/v1`;
  const answer = await fetch(`${face}/token?grant_type=password`, {
    method: "POST",
    headers: { ...json, apikey: ours.secrets.AUTH_SUPABASE_PUBLISHABLE_KEYS },
    body: JSON.stringify({ email: ours.email, password: PASSWORD }),
  });
  if (answer.status !== 200) throw new Error(`face sign-in: ${answer.status} ${await answer.text()}`);
  return (await answer.json()).refresh_token;
}

function facePaths(ours) {
  const face = `${new URL(ours.base).origin}/supabase/auth/v1`;
  const headers = { ...json, apikey: ours.secrets.AUTH_SUPABASE_PUBLISHABLE_KEYS };
  return [
    [
      "Supabase refresh",
      "POST /supabase/auth/v1/token",
      {
        url: `${face}/token?grant_type=refresh_token`,
        requests: [
          {
            method: "POST",
            headers,
            setupRequest: (request) => ({
              ...request,
              body: JSON.stringify({ refresh_token: FACE_POOL.shift() }),
            }),
            onResponse: (status, body) => {
              if (status === 200) FACE_POOL.push(JSON.parse(body).refresh_token);
            },
          },
        ],
      },
    ],
    [
      "Supabase sign-in",
      "POST /supabase/auth/v1/token",
      {
        url: `${face}/token?grant_type=password`,
        method: "POST",
        headers,
        body: JSON.stringify({ email: ours.email, password: PASSWORD }),
      },
    ],
  ];
}

function paths(ours, client, pool) {
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString("base64")}`;
  return [
    [
      "session check",
      "GET /auth/v1/user",
      { url: `${ours.base}/user`, headers: { authorization: `Bearer ${ours.session.accessToken}` } },
    ],
    ["refresh", "POST /auth/v1/token", rotatingRefresh(ours.base, ours.pool)],
    [
      "org switch",
      "POST /auth/v1/token",
      rotatingRefresh(ours.base, SWITCH_POOL, () => {}, { orgId: SWITCH_ORG }),
    ],
    ["refresh in an org", "POST /auth/v1/token", rotatingRefresh(ours.base, IN_ORG_POOL)],
    ...(OTHER_MEMBER
      ? [
          [
            "org switch, other shard",
            "POST /auth/v1/token",
            rotatingRefresh(ours.base, OTHER_SWITCH_POOL, () => {}, { orgId: SWITCH_ORG }),
          ],
          [
            "refresh in an org, other shard",
            "POST /auth/v1/token",
            rotatingRefresh(ours.base, OTHER_IN_ORG_POOL),
          ],
        ]
      : []),
    [
      "sign-in",
      "POST /auth/v1/signin/email-password",
      {
        url: `${ours.base}/signin/email-password`,
        method: "POST",
        headers: json,
        body: JSON.stringify({ email: ours.email, password: PASSWORD }),
      },
    ],
    [
      "sign-up",
      "POST /auth/v1/signup/email-password",
      {
        url: `${ours.base}/signup/email-password`,
        requests: [
          {
            method: "POST",
            headers: json,
            setupRequest: (request) => ({
              ...request,
              body: JSON.stringify({
                email: `latency-${process.pid}-${emails++}@example.com`,
                password: PASSWORD,
              }),
            }),
          },
        ],
      },
    ],
    [
      "OAuth2 code exchange",
      "POST /auth/v1/oauth2/token",
      {
        url: `${ours.base}/oauth2/token`,
        amount: CODES,
        requests: [
          {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic },
            setupRequest: (request) => ({
              ...request,
              body: new URLSearchParams({
                grant_type: "authorization_code",
                code: pool.shift(),
                redirect_uri: REDIRECT_URI,
                code_verifier: VERIFIER,
              }).toString(),
            }),
          },
        ],
      },
    ],
    ["JWKS", "GET /auth/v1/.well-known/jwks.json", { url: `${ours.base}/.well-known/jwks.json` }],
    ...facePaths(ours),
    ...extraPaths,
  ];
}

/** The binding's and the SAML ACS's rows (bench/latency-binding.mjs, bench/latency-saml.mjs), set once served. */
let extraPaths = [];

/** The shape seen most often, and how many other shapes there were. */
function commonest(shapes) {
  const entries = Object.entries(shapes ?? {}).sort((a, b) => b[1] - a[1]);
  if (entries.length === 0) return { shape: { sequential: 0, perKind: [] }, share: 1, others: [] };
  const total = entries.reduce((sum, [, n]) => sum + n, 0);
  return {
    shape: JSON.parse(entries[0][0]),
    share: entries[0][1] / total,
    others: entries.slice(1).map(([shape, n]) => `${n}× ${JSON.parse(shape).perKind.join(", ") || "none"}`),
  };
}

const describe = (shape) => shape.perKind.join(", ") || "none";

const dir = mkdtempSync(join(tmpdir(), "edge-auth-latency-"));
const all = [];
const lines = [];
try {
  bundle(join(dir, "build"));
  bundleLatencyEntry(join(dir, "build-latency"));
  // The service's own address known before it starts: the consumer's JWKS URL and the SAML SP's ACS URL name it.
  const port = await freePort();
  const server = `http://127.0.0.1:${port}/auth/v1`;
  const ours = await serveOurs(dir, true, "RS256", {
    build: "build-latency",
    entry: "latency-entry.js",
    state: "state-latency",
    bindings: { AUTH_OAUTH2_PROVIDER_ENABLED: "true", AUTH_SERVER_URL: server },
    port,
    workers: await bindingConsumer(dir, server),
  });
  try {
    const origin = new URL(ours.base).origin;
    const client = await newClient(ours.base, ours.secrets.AUTH_ADMIN_SECRET);
    const idp = await samlIdp(dir);
    const saml = await samlConnection(ours, idp);
    await samlWarmUp(ours, idp, saml);
    const samlResults = [];
    const samlUnexpected = { post: 0, get: 0 };
    const samlPending = [];
    SWITCH_ORG = (await post(ours.base, "/orgs", { name: "Latency org" }, ours.session.accessToken)).id;
    // Where the org rows' sessions are: the home database's rows are read by locator, another's through its hint.
    // With two shards, a second member in the shard the bench user is not in measures the other placement.
    if (SHARDS.length > 1) {
      const shard = SHARDS[shardIndexOfUser(ours.session.user.id)];
      OTHER_MEMBER = await memberInOtherShard(ours, shardIndexOfUser(ours.session.user.id));
      const other = SHARDS[shardIndexOfUser(OTHER_MEMBER.id)];
      console.log(
        `the bench user's sessions are in ${shard}, the other member's in ${other} (${SHARDS[0]} is the home database)`,
      );
    }
    const samlRows = samlPaths(saml, samlPending, samlResults, samlUnexpected);
    for (const profile of PROFILES) {
      await control(origin, "profile?name=none");
      // The binding's `live` row asks whether the session stands: a session of this profile's, since the sign-in rows
      // of the profiles before (this same user, hundreds of times) ended the older ones under the session cap.
      ours.session = (
        await post(ours.base, "/signin/email-password", { email: ours.email, password: PASSWORD })
      ).session;
      extraPaths = [...(await bindingPaths(ours)), ...samlRows];
      const pool = await codes(ours.base, client, ours.session.accessToken, CODES);
      // Fresh sessions for every refresh row, each profile: a run ends with a refresh in flight whose successor is
      // dropped, and the sign-in rows sign this user in again and again while a user keeps at most 200 sessions,
      // least recently used out first (bench/lib.mjs `topUp`).
      FACE_POOL.length = 0;
      SWITCH_POOL.length = 0;
      IN_ORG_POOL.length = 0;
      while (FACE_POOL.length < CONNECTIONS * 2) FACE_POOL.push(await faceSignIn(ours));
      const signedIn = async () =>
        (await post(ours.base, "/signin/email-password", { email: ours.email, password: PASSWORD })).session
          .refreshToken;
      while (SWITCH_POOL.length < CONNECTIONS * 2) SWITCH_POOL.push(await signedIn());
      while (IN_ORG_POOL.length < CONNECTIONS * 2) {
        IN_ORG_POOL.push(
          (await post(ours.base, "/token", { refreshToken: await signedIn(), orgId: SWITCH_ORG }))
            .refreshToken,
        );
      }
      OTHER_SWITCH_POOL.length = 0;
      OTHER_IN_ORG_POOL.length = 0;
      if (OTHER_MEMBER) {
        const otherSignedIn = async () =>
          (await post(ours.base, "/signin/email-password", { email: OTHER_MEMBER.email, password: PASSWORD }))
            .session.refreshToken;
        while (OTHER_SWITCH_POOL.length < CONNECTIONS * 2) OTHER_SWITCH_POOL.push(await otherSignedIn());
        while (OTHER_IN_ORG_POOL.length < CONNECTIONS * 2) {
          OTHER_IN_ORG_POOL.push(
            (await post(ours.base, "/token", { refreshToken: await otherSignedIn(), orgId: SWITCH_ORG }))
              .refreshToken,
          );
        }
      }
      await ours.topUp();
      samlPending.push(...(await samlSignIns(ours, idp, saml, CODES)));
      Object.assign(samlUnexpected, { post: 0, get: 0 });
      await control(origin, `profile?name=${profile}`);
      for (const [name, route, { unexpected, ...options }] of paths(ours, client, pool)) {
        await control(origin, "reset");
        const result = await run(`${name} (${profile})`, {
          connections: CONNECTIONS,
          ...(options.amount ? {} : { duration: SECONDS }),
          ...options,
        });
        // A redirect that carries an error (the SAML rows) is an unexpected answer, as a non-2xx is.
        result.failures += unexpected?.() ?? 0;
        all.push(result);
        // waitUntil work ends after the answer: give it a moment before reading what was recorded.
        await new Promise((resolve) => setTimeout(resolve, 500));
        const { stats } = await control(origin, "report");
        const before = commonest(stats[route]?.before);
        const after = commonest(stats[route]?.after);
        const budget = BUDGETS[name];
        const met = budget.met(before.shape);
        const trace = (await control(origin, "trace"))[route] ?? [];
        lines.push({ profile, name, result, before, after, budget, met, trace });
      }
    }
  } finally {
    await ours.mf.dispose();
  }

  console.log(
    `\nlatency model: ${CONNECTIONS} connection(s), ${SECONDS}s per path (code exchange: ${CODES} codes), rate limits on; round trips are "waves/calls" per binding, sequential = waves over all bindings but the rate limiters\n`,
  );
  for (const profile of PROFILES) {
    console.log(`${profile}:`);
    console.log(
      "  path                            p50 ms  p99 ms   req/s  sequential  before the answer                          after it (waitUntil)          budget",
    );
    for (const line of lines.filter((l) => l.profile === profile)) {
      const verdict = line.met === null ? "" : line.met ? " ✔" : " ✘";
      console.log(
        `  ${line.name.padEnd(30)} ${String(line.result.p50).padStart(7)} ${String(line.result.p99).padStart(7)} ${line.result.rps.toFixed(1).padStart(7)} ${String(line.before.shape.sequential).padStart(11)}  ${describe(line.before.shape).padEnd(42)} ${describe(line.after.shape).padEnd(29)} ${line.budget.text}${verdict}`,
      );
      if (line.before.others.length > 0) {
        console.log(
          `      also seen before the answer (${((1 - line.before.share) * 100).toFixed(0)} %): ${line.before.others.join("; ")}`,
        );
      }
    }
    console.log("");
  }
  console.log(
    `the calls of one request per path (the last one of ${PROFILES[0]}), in order; [start-end] numbers events, so calls whose spans overlap ran at once:`,
  );
  for (const line of lines.filter((l) => l.profile === PROFILES[0])) {
    console.log(`  ${line.name}:`);
    for (const call of line.trace) console.log(`    ${call}`);
  }
  failOnUnexpectedAnswers(all);
  // Issue 48: every path within its budget, or the run fails (after printing everything, so the miss is seen).
  const missed = lines.filter((line) => line.met === false);
  if (missed.length > 0) {
    console.error(
      `\nover budget: ${missed.map((line) => `${line.name} (${line.profile}): ${line.before.shape.sequential} waves, budget ${line.budget.text}`).join("; ")}`,
    );
    process.exitCode = 1;
  } else {
    console.log("every path within its round-trip budget");
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
