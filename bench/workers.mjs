// The service binding against a consumer that verifies tokens itself (issue 45, "Speed"; docs/performance.md): a
// consumer Worker (bench/consumer-worker.js) served in the same workerd as the service's bundle, with a real service
// binding to its `AuthService` entrypoint, driven by autocannon route by route. Each row is against the consumer's
// own jose verification in the same run; check's decisions per second against an absolute 2,000.
// Part of `npm run bench` (bench/run.mjs calls it); `node bench/workers.mjs` runs it alone.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { bundle, CONNECTIONS, DURATION, failOnUnexpectedAnswers, run, serveOurs } from "./lib.mjs";
import { paired, ROUNDS } from "./paired.mjs";

/** The targets of issue 45: each binding row's req/s over the jose row's, and check's decisions per second. */
export const TARGETS = { binding: 5, live: 2, checksPerSecond: 2000 };

/** The service's own entity types (docs/permissions.md) and the bench's document. */
const SCHEMA = `
entity Role;
entity Org;
entity OrgRole in [Org];
entity User in [Role, OrgRole] {
  email?: String,
  emailVerified: Bool,
  roles: Set<String>,
  defaultRole: String,
  metadata: {},
};
entity Document {
  owner?: String,
  public?: Bool,
  archived?: Bool,
  viewers?: Set<User>,
  commenters?: Set<User>,
  editors?: Set<User>,
};
action view, comment, edit, share, delete appliesTo { principal: User, resource: Document };
`;

/** Ten policies of the common kinds (docs/permissions.md): sharing by relationship, ownership, roles, two forbids. */
const POLICIES = `
@id("viewers") permit (principal, action == Action::"view", resource)
  when { resource has viewers && principal in resource.viewers };
@id("commenters") permit (principal, action in [Action::"view", Action::"comment"], resource)
  when { resource has commenters && principal in resource.commenters };
@id("editors") permit (principal, action in [Action::"view", Action::"comment", Action::"edit"], resource)
  when { resource has editors && principal in resource.editors };
@id("editors-share") permit (principal, action == Action::"share", resource)
  when { resource has editors && principal in resource.editors && principal.emailVerified };
@id("owner") permit (principal, action, resource)
  when { resource has owner && principal has email && resource.owner == principal.email };
@id("public") permit (principal, action == Action::"view", resource) when { resource has public && resource.public };
@id("admins") permit (principal in Role::"admin", action, resource);
@id("auditors") permit (principal in Role::"auditor", action == Action::"view", resource);
@id("archived") forbid (principal, action in [Action::"edit", Action::"share", Action::"delete"], resource)
  when { resource has archived && resource.archived };
@id("suspended") forbid (principal in Role::"suspended", action, resource);
`;

/** The relationships stored on the bench document: the bench user one of its editors, 99 other users beside. */
const RELATIONSHIPS = 100;
const relationsOf = (userId) => [
  { relation: "editors", id: userId },
  ...Array.from({ length: RELATIONSHIPS - 1 }, (_, i) => ({
    relation: i < 60 ? "viewers" : i < 90 ? "editors" : "commenters",
    id: crypto.randomUUID(),
  })),
];

/** A port free on loopback now: the service's, which the consumer must know (its JWKS URL) before both start. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The consumer Worker bundled with jose, as `wrangler deploy` would bundle an app's Worker; the floor beside it. */
export async function bundleConsumer(outdir) {
  mkdirSync(outdir, { recursive: true });
  for (const worker of ["consumer-worker.js", "rpc-floor-worker.js"]) {
    await build({
      entryPoints: [join(import.meta.dirname, worker)],
      outfile: join(outdir, worker),
      bundle: true,
      format: "esm",
      platform: "neutral",
      conditions: ["workerd", "worker", "browser"],
      external: ["cloudflare:workers"],
      logLevel: "warning",
    });
  }
}

/**
 * The consumer and the floor as Workers of the service's workerd: AUTH bound to the service's `AuthService`, FLOOR to
 * the floor's `Floor`; the consumer on its own socket on loopback.
 */
export const consumerWorkers = (outdir, server) => [
  {
    name: "consumer",
    modulesRoot: outdir,
    modules: [{ type: "ESModule", path: join(outdir, "consumer-worker.js") }],
    compatibilityDate: "2026-11-01",
    bindings: { JWKS_URL: `${server}/.well-known/jwks.json`, ISSUER: server },
    serviceBindings: {
      AUTH: { name: "edge-auth", entrypoint: "AuthService" },
      FLOOR: { name: "rpc-floor", entrypoint: "Floor" },
    },
    // Straight to the consumer, not through Miniflare's entry Worker (which sends everything to the service).
    unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
  },
  {
    name: "rpc-floor",
    modulesRoot: outdir,
    modules: [{ type: "ESModule", path: join(outdir, "rpc-floor-worker.js") }],
    compatibilityDate: "2026-11-01",
  },
];

/** The schema, the ten policies and the document's relationships, through the admin API as an operator would. */
async function installPermissions({ base, secrets }, userId, document) {
  const admin = async (method, path, body) => {
    const answer = await fetch(`${base}${path}`, {
      method,
      headers: { "content-type": "application/json", "x-hasura-admin-secret": secrets.AUTH_ADMIN_SECRET },
      body: JSON.stringify(body),
    });
    if (!answer.ok) throw new Error(`${method} ${path}: ${answer.status} ${await answer.text()}`);
  };
  await admin("PUT", "/admin/authz/schema", { schema: SCHEMA });
  await admin("PUT", "/admin/authz/policies", { policies: POLICIES });
  for (const { relation, id } of relationsOf(userId)) {
    await admin("POST", "/admin/authz/relationships", {
      resource: { type: "Document", id: document },
      relation,
      subject: { type: "User", id },
    });
  }
}

/**
 * Serves the service with the consumer beside it, installs the permissions, and runs the four rows. Returns the rows
 * and a printer of their table and targets. `dir/build` holds the service's bundle (lib.mjs `bundle`).
 */
export async function measureBindings(dir) {
  const port = await freePort();
  const server = `http://127.0.0.1:${port}/auth/v1`;
  await bundleConsumer(join(dir, "consumer"));
  const ours = await serveOurs(dir, false, "RS256", {
    state: "state-workers",
    port,
    // The token's issuer and the JWKS URL the consumer fetches are the service's own address here.
    bindings: { AUTH_SERVER_URL: server },
    workers: consumerWorkers(join(dir, "consumer"), server),
  });
  try {
    const { session } = ours;
    const document = crypto.randomUUID();
    await installPermissions(ours, session.user.id, document);
    const consumer = (await ours.mf.unsafeGetDirectURL("consumer")).origin;
    const headers = { authorization: `Bearer ${session.accessToken}` };
    const user = `user=${session.user.id}`;
    const rows = {
      jose: ["consumer verifies: jose + cached remote JWKS", `/jose?${user}`],
      bare: ["consumer floor: no auth at all", `/bare?${user}`],
      floor: ["binding floor: an entrypoint doing nothing", `/rpc-floor?${user}`],
      binding: ["binding: AUTH.authenticate(request)", `/binding?${user}`],
      live: ["binding: AUTH.authenticate(request, {live})", `/binding-live?${user}`],
      check: ["binding: AUTH.check, 10 policies, 100 rels", `/check?${user}&document=${document}`],
    };
    // One request each first: a route that does not answer as expected stops the bench with its answer.
    for (const [name, path] of Object.values(rows)) {
      const answer = await fetch(`${consumer}${path}`, { headers });
      if (answer.status !== 200) throw new Error(`${name}: ${answer.status} ${await answer.text()}`);
    }
    const scenario = (key) => ({
      name: rows[key][0],
      options: { url: `${consumer}${rows[key][1]}`, headers },
    });
    // Each row against jose in interleaved slices (bench/paired.mjs): on a loaded machine a ratio of two runs
    // minutes apart says more of the machine than of the rows.
    const pairs = [];
    for (const key of ["bare", "floor", "binding", "live"]) {
      pairs.push({ key, ...(await paired(scenario("jose"), scenario(key))) });
    }
    const check = await run(rows.check[0], scenario("check").options);
    const results = [...pairs.flatMap(({ a, b }) => [a, b]), check];
    return { results, print: () => printBindings(pairs, check) };
  } finally {
    await ours.mf.dispose();
  }
}

function printBindings(pairs, check) {
  const verdict = (met) => (met ? "met" : "missed");
  const goals = { binding: TARGETS.binding, live: TARGETS.live };
  console.log(
    `\na consumer Worker beside the service (same workerd), each row (b) against the consumer verifying with jose (a), interleaved: ${ROUNDS} slices each side\n`,
  );
  console.log(
    "row (b)                                          b / a   rounds: median   min – max    b req/s  a req/s  target",
  );
  for (const { key, a, b, roundRatios } of pairs) {
    const ratio = b.rps / a.rps;
    const sorted = [...roundRatios].sort((x, y) => x - y);
    const goal = goals[key];
    console.log(
      `${b.name.padEnd(46)} ${ratio.toFixed(2).padStart(6)}×   ${sorted[Math.floor(sorted.length / 2)].toFixed(2).padStart(6)}×       ${sorted[0].toFixed(2)} – ${sorted.at(-1).toFixed(2)}  ${b.rps.toFixed(0).padStart(7)}  ${a.rps.toFixed(0).padStart(7)}  ${goal ? `≥ ${goal}×, ${verdict(ratio >= goal)}` : "(a ceiling)"}`,
    );
  }
  console.log(
    `${check.name.padEnd(46)} ${check.rps.toFixed(0).padStart(6)} decisions/s (p50 ${check.p50} ms, p99 ${check.p99} ms)  target ≥ ${TARGETS.checksPerSecond}, ${verdict(check.rps >= TARGETS.checksPerSecond)}`,
  );
  // No route of the consumer is faster than its bare one, nor a call through a binding than the empty entrypoint's.
  console.log(
    "the floors bound every row: nothing is faster than the bare consumer, nothing through a binding than the empty entrypoint",
  );
}

// Alone: bundle, measure, print, fail on any unexpected answer.
if (process.argv[1] === import.meta.filename) {
  const dir = mkdtempSync(join(tmpdir(), "edge-auth-bench-workers-"));
  try {
    bundle(join(dir, "build"));
    const { results, print } = await measureBindings(dir);
    console.log(`\n${CONNECTIONS} connections, ${DURATION}s per scenario, workerd via Miniflare on loopback`);
    print();
    failOnUnexpectedAnswers(results);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
