// `npm run bench:profile -- [scenario]`: a CPU profile of the Worker itself (workerd's V8, through the inspector, the
// same profiler Chrome DevTools attaches to) while autocannon drives one scenario. Prints the functions with the most
// self time, grouped by package, and writes the whole profile (`.cpuprofile`, opens in DevTools) under `bench/out/`.
// Scenarios: user (GET /user), refresh (POST /token), signin (POST /signin/email-password), signup (POST
// /signup/email-password, a new email each time), verify
// (POST /token/verify), image (a cached 300 px variant), healthz. `all` runs each in turn and prints the table of
// CPU per request docs/performance.md keeps: the Worker's JavaScript (ours and the libraries bundled with it), its WASM
// (argon2id) and the runtime (V8's and workerd's native code: WebCrypto, D1/DO/R2 bindings, garbage collection).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PhotonImage } from "@cf-wasm/photon/node";
import { generateSecrets, generateSigningJwk } from "../scripts/secrets.mjs";
import {
  applyMigrations,
  bundle,
  CONNECTIONS,
  DURATION,
  rotatingRefresh,
  run,
  workerFromBundle,
} from "./lib.mjs";

const SCENARIOS = ["user", "face-user", "refresh", "signin", "signup", "verify", "image", "healthz"];
const asked = process.argv[2] ?? "user";
const scenarios = asked === "all" ? SCENARIOS.filter((name) => name !== "healthz") : [asked];
const INSPECTOR_PORT = Number(process.env.BENCH_INSPECTOR_PORT ?? 9329);

async function post(base, path, body) {
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** A minimal Chrome DevTools Protocol client over the inspector's WebSocket. */
async function inspector(url) {
  // Miniflare's inspector proxy accepts only local origins, as DevTools would send.
  const socket = new WebSocket(url, { headers: { origin: "http://localhost" } });
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
    socket.onclose = () => reject(new Error(`the inspector at ${url} closed the connection`));
  });
  let nextId = 1;
  const pending = new Map();
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (message.id && pending.has(message.id)) {
      pending.get(message.id)(message);
      pending.delete(message.id);
    }
  };
  return {
    send(method, params = {}) {
      const id = nextId++;
      socket.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve) => pending.set(id, resolve));
    },
    close: () => socket.close(),
  };
}

/**
 * Self time per function (and per package, from the bundle's module comments lost: by URL and name), and by kind:
 * the Worker's JavaScript (frames with a script URL: our bundle and what it bundles), its WASM (argon2id, the image
 * codecs), and the runtime (native frames: WebCrypto, bindings, "(garbage collector)", "(program)"); "(idle)" is
 * waiting for I/O.
 */
function summarise(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMicros = new Map();
  const kinds = { javascript: 0, wasm: 0, runtime: 0, idle: 0 };
  const intervals = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]);
    const { functionName, lineNumber, url } = node.callFrame;
    const key = `${functionName || "(anonymous)"}:${lineNumber + 1}`;
    const micros = intervals[i] ?? 0;
    selfMicros.set(key, (selfMicros.get(key) ?? 0) + micros);
    if (functionName === "(idle)") kinds.idle += micros;
    else if (url.startsWith("wasm")) kinds.wasm += micros;
    else if (url) kinds.javascript += micros;
    else kinds.runtime += micros;
  }
  const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);
  return { total, kinds, top: [...selfMicros.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25) };
}

/** A public bucket with a small JPEG, and its 300 px variant made once (then served from R2's variant cache). */
async function imageVariantUrl(storage, adminSecret) {
  const created = await fetch(`${storage}/buckets`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-hasura-admin-secret": adminSecret },
    body: JSON.stringify({
      id: "profile",
      rules: { upload: "public", read: "public", update: "public", delete: "public" },
    }),
  });
  if (created.status !== 201) throw new Error(`bucket: ${created.status} ${await created.text()}`);
  const [width, height] = [800, 600];
  const pixels = new Uint8Array(width * height * 4).map((_, i) => (i % 4 === 3 ? 255 : (i * 7) & 255));
  const image = new PhotonImage(pixels, width, height);
  const form = new FormData();
  form.append("bucket-id", "profile");
  form.append("file[]", new Blob([image.get_bytes_jpeg(85)], { type: "image/jpeg" }), "photo.jpg");
  image.free();
  const uploaded = await fetch(`${storage}/files`, { method: "POST", body: form });
  if (uploaded.status !== 201) throw new Error(`upload: ${uploaded.status} ${await uploaded.text()}`);
  const url = `${storage}/files/${(await uploaded.json()).processedFiles[0].id}?w=300&q=80&f=jpeg`;
  if (!(await fetch(url)).ok) throw new Error("the variant was not made");
  return url;
}

const dir = mkdtempSync(join(tmpdir(), "edge-auth-profile-"));
bundle(join(dir, "build"));
const secrets = generateSecrets();
/** `BENCH_ALG=EdDSA` (or ES256): access tokens signed with it, an RSA key beside for ID tokens, as bench/run.mjs. */
const alg = process.env.BENCH_ALG ?? "RS256";
const mf = workerFromBundle(
  dir,
  {
    ...secrets,
    ...(alg === "RS256"
      ? {}
      : { AUTH_JWT_PRIVATE_KEYS: JSON.stringify([generateSigningJwk(alg), generateSigningJwk()]) }),
    AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false",
    AUTH_RATE_LIMIT_ENABLE: "false",
    // `face-user`: the Supabase face's getUser (issue 43), beside the Nhost face's `user`.
    AUTH_SUPABASE_API_ENABLED: "true",
  },
  { inspectorPort: INSPECTOR_PORT },
);
try {
  const url = await mf.ready;
  process.stderr.write(`ready at ${url.origin}\n`);
  const base = `${url.origin}/auth/v1`;
  await applyMigrations(mf);
  const { session } = await post(base, "/signup/email-password", {
    email: "profile@example.com",
    password: "benchmark password",
  });
  const pool = [];
  for (let i = 0; i < CONNECTIONS * 2; i++) {
    pool.push(
      (
        await post(base, "/signin/email-password", {
          email: "profile@example.com",
          password: "benchmark password",
        })
      ).session.refreshToken,
    );
  }
  const bearer = { authorization: `Bearer ${session.accessToken}` };
  let signUps = 0;
  const json = { "content-type": "application/json" };
  const optionsOf = async (scenario) =>
    ({
      user: { url: `${base}/user`, headers: bearer },
      "face-user": async () => {
        const face = `${url.origin}/supabase/auth/v1`;
        const apikey = { apikey: secrets.AUTH_SUPABASE_PUBLISHABLE_KEYS, ...json };
        const signedIn = await fetch(`${face}/token?grant_type=password`, {
          method: "POST",
          headers: apikey,
          body: JSON.stringify({ email: "profile@example.com", password: "benchmark password" }),
        });
        const { access_token } = await signedIn.json();
        return { url: `${face}/user`, headers: { ...apikey, authorization: `Bearer ${access_token}` } };
      },
      healthz: { url: `${base}/healthz` },
      verify: { url: `${base}/token/verify`, method: "POST", headers: { ...json, ...bearer } },
      signin: {
        url: `${base}/signin/email-password`,
        method: "POST",
        headers: json,
        body: JSON.stringify({ email: "profile@example.com", password: "benchmark password" }),
      },
      // A new account per request (issue 31: the sign-up row against better-auth).
      signup: {
        url: `${base}/signup/email-password`,
        requests: [
          {
            method: "POST",
            headers: json,
            setupRequest: (request) => ({
              ...request,
              body: JSON.stringify({
                email: `profile-${signUps++}@example.com`,
                password: "benchmark password",
              }),
            }),
          },
        ],
      },
      image: async () => ({
        url: await imageVariantUrl(`${url.origin}/storage/v1`, secrets.AUTH_ADMIN_SECRET),
      }),
      refresh: rotatingRefresh(base, pool),
    })[scenario];

  process.stderr.write("connecting the inspector\n");
  const cdp = await inspector(`ws://127.0.0.1:${INSPECTOR_PORT}/edge-auth`);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
  const rows = [];
  for (const scenario of scenarios) {
    let options = await optionsOf(scenario);
    if (!options) throw new Error(`unknown scenario ${scenario}: ${SCENARIOS.join(", ")} or all`);
    if (typeof options === "function") options = await options();
    await cdp.send("Profiler.start");
    const result = await run(`${scenario} (profiled)`, options);
    const { result: stopped } = await cdp.send("Profiler.stop");

    mkdirSync("bench/out", { recursive: true });
    const file = join("bench/out", `${scenario}-${Date.now()}.cpuprofile`);
    writeFileSync(file, JSON.stringify(stopped.profile));
    const { total, kinds, top } = summarise(stopped.profile);
    const perRequest = (micros) => micros / 1000 / result.total;
    rows.push({
      scenario,
      rps: result.rps,
      javascript: perRequest(kinds.javascript),
      wasm: perRequest(kinds.wasm),
      runtime: perRequest(kinds.runtime),
    });
    if (scenarios.length > 1) continue;
    console.log(
      `\n${scenario}: ${result.rps.toFixed(0)} req/s under the profiler, p50 ${result.p50} ms, p99 ${result.p99} ms; ${DURATION}s sampled`,
    );
    console.log(
      `self time by function (of ${(total / 1000).toFixed(0)} ms sampled; "(idle)" is waiting for I/O):\n`,
    );
    for (const [name, micros] of top) {
      console.log(`${((micros / total) * 100).toFixed(1).padStart(5)} %  ${name}`);
    }
    console.log(`\nwhole profile: ${file} (Chrome DevTools → Performance → Load profile)`);
  }
  cdp.close();
  console.log("\nCPU per request in the Worker's isolate (ms; sampled every 100 µs under load):\n");
  console.log("scenario   req/s   JavaScript     WASM   runtime    total");
  for (const row of rows) {
    console.log(
      `${row.scenario.padEnd(9)} ${row.rps.toFixed(0).padStart(6)} ${row.javascript.toFixed(3).padStart(12)} ${row.wasm.toFixed(3).padStart(8)} ${row.runtime.toFixed(3).padStart(9)} ${(row.javascript + row.wasm + row.runtime).toFixed(3).padStart(8)}`,
    );
  }
} finally {
  await mf.dispose();
  rmSync(dir, { recursive: true, force: true });
}
