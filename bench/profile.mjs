// `npm run bench:profile -- [scenario]`: a CPU profile of the Worker itself (workerd's V8, through the inspector, the
// same profiler Chrome DevTools attaches to) while autocannon drives one scenario. Prints the functions with the most
// self time, grouped by package, and writes the whole profile (`.cpuprofile`, opens in DevTools) under `bench/out/`.
// Scenarios: user (GET /user), refresh (POST /token), healthz.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSecrets } from "../scripts/secrets.mjs";
import { applyMigrations, bundle, CONNECTIONS, DURATION, run, workerFromBundle } from "./lib.mjs";

const scenario = process.argv[2] ?? "user";
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

/** Self time per function (and per package, from the bundle's module comments lost: by URL and name). */
function summarise(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMicros = new Map();
  const intervals = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]);
    const { functionName, lineNumber } = node.callFrame;
    const key = `${functionName || "(anonymous)"}:${lineNumber + 1}`;
    selfMicros.set(key, (selfMicros.get(key) ?? 0) + (intervals[i] ?? 0));
  }
  const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);
  return { total, top: [...selfMicros.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25) };
}

const dir = mkdtempSync(join(tmpdir(), "edge-auth-profile-"));
bundle(join(dir, "build"));
const mf = workerFromBundle(
  dir,
  {
    ...generateSecrets(),
    AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false",
    AUTH_RATE_LIMIT_ENABLE: "false",
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
  const options = {
    user: { url: `${base}/user`, headers: { authorization: `Bearer ${session.accessToken}` } },
    healthz: { url: `${base}/healthz` },
    refresh: {
      url: `${base}/token`,
      requests: [
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          setupRequest: (request) => ({ ...request, body: JSON.stringify({ refreshToken: pool.shift() }) }),
          onResponse: (status, body) => {
            if (status === 200) pool.push(JSON.parse(body).refreshToken);
          },
        },
      ],
    },
  }[scenario];
  if (!options) throw new Error(`unknown scenario ${scenario}: user, refresh or healthz`);

  process.stderr.write("connecting the inspector\n");
  const cdp = await inspector(`ws://127.0.0.1:${INSPECTOR_PORT}/edge-auth`);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
  await cdp.send("Profiler.start");
  const result = await run(`${scenario} (profiled)`, options);
  const { result: stopped } = await cdp.send("Profiler.stop");
  cdp.close();

  mkdirSync("bench/out", { recursive: true });
  const file = join("bench/out", `${scenario}-${Date.now()}.cpuprofile`);
  writeFileSync(file, JSON.stringify(stopped.profile));
  const { total, top } = summarise(stopped.profile);
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
} finally {
  await mf.dispose();
  rmSync(dir, { recursive: true, force: true });
}
