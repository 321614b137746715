// `npm run soak -- [--minutes 20] [--connections 64] [--json FILE]` (issues 31, 48): the bundled Worker and the image
// transformer served with Miniflare's API as `npm run bench` serves them, then a long run at a fixed number of
// requests in flight mixing sign-in, refresh (rotating), session check, upload and transformed download. Every minute
// one line: requests/s per kind and in all, p50 and p99 of every answer of that minute, non-2xx (with the first
// bodies), memory read from outside the Worker (see `memory()`), CPU (workerd's per request, the soak's own, the
// machine's and its other processes') and the local storage's files. Exit 1 on any non-2xx, socket error or timeout,
// on memory growing past the bound below, or on throughput drifting (`throughputVerdict`). `--json FILE` writes the
// minute samples. A bench, not a test: it needs a quiet machine and prints its verdict.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { PhotonImage } from "@cf-wasm/photon/node";
import autocannon from "autocannon";
import { generateSecrets } from "../scripts/secrets.mjs";
import { applyMigrations, bundle, rotatingRefresh, workerFromBundle } from "./lib.mjs";
import { memoryParts, partsLine } from "./soak-memory-parts.mjs";

const { values: flags } = parseArgs({
  options: {
    minutes: { type: "string", default: "20" },
    connections: { type: "string", default: "64" },
    json: { type: "string" },
    only: { type: "string" },
  },
});
const MINUTES = Number(flags.minutes);
const CONNECTIONS = Number(flags.connections);
if (!(Number.isInteger(MINUTES) && MINUTES >= 2) || !(Number.isInteger(CONNECTIONS) && CONNECTIONS >= 8)) {
  throw new Error("--minutes must be an integer ≥ 2 and --connections an integer ≥ 8");
}

/**
 * The memory bound. Workers give an isolate 128 MB (JavaScript heap and WASM memory together; Cloudflare's Workers
 * limits page), and an isolate under steady traffic lives for hours, so a leak is a growth that keeps going once
 * the run is warm. Warm is the end of minute 5 (a quarter of a shorter run): codecs and argon2id's 19 MiB WASM memory
 * allocated, JIT done, and workerd's resident memory levelled off. In the first 20-minute run (docs/performance.md)
 * it climbed for three minutes (the local runtime's SQLite page caches and Durable Objects filling), then moved within
 * ±35 MB of 1,000 MB: two single samples that far apart differ by noise alone. So the growth judged is the trend: the
 * least-squares slope of the minute samples after warm, times the minutes it spans.
 * - the Worker isolate's live heap (after a full GC) may grow at most HEAP_BOUND_MB. 8 MB over the 15 warm minutes of
 *   the full run is ~32 MB an hour: an isolate at ~22 MB (measured) would need 3 h to reach the limit, and a real
 *   per-request leak (bytes kept by each of ~10⁵ requests) crosses it quickly; anything below is within the noise of
 *   a GC'd heap that holds caches filling to their caps.
 * - workerd's resident memory (both isolates, SQLite page caches of D1 and of every live Durable Object, the
 *   runtime) may grow at most RSS_BOUND_MB: it is not the platform's limit, but an unbounded growth there
 *   (Durable Objects never evicted, WASM memory of the image transformer growing) shows here first. 64 MB is 4× the
 *   step a single 1.2 MP decode makes and leaves room for allocator fragmentation, which never returns memory.
 */
const HEAP_BOUND_MB = 8;
const RSS_BOUND_MB = 64;
const WARM_MINUTE = Math.min(5, Math.floor(MINUTES / 4));

const PASSWORD = "soak password";
const USERS = 16;
/** One fresh transformation (a variant not yet in R2) every this many downloads; the others are `?w=300`, cached. */
const FRESH_VARIANT_EVERY = 20;

/** Limits on, as in production: every count kept (per address and per account), bursts raised so nothing is refused. */
const LIMITS_RAISED = Object.fromEntries(
  ["GLOBAL", "BRUTE_FORCE", "SIGNUPS", "EMAIL", "REFRESH", "TRANSFORM", "TRANSFORM_FILE"].map((bucket) => [
    `AUTH_RATE_LIMIT_${bucket}_BURST`,
    "100000000",
  ]),
);

/** Connections per kind, as shares of the total: a session check for every refresh and a half, sign-in rare. */
function split(total) {
  if (flags.only) {
    // `--only signIn,upload`: those kinds alone, the connections shared between them (a diagnosis: which kind of
    // work makes memory or time grow).
    const only = flags.only.split(",").map((kind) => kind.trim());
    const unknown = only.filter((kind) => !KINDS.includes(kind));
    if (unknown.length > 0)
      throw new Error(`--only: unknown kind ${unknown.join(", ")} (${KINDS.join(", ")})`);
    return Object.fromEntries(
      KINDS.map((kind) => [kind, only.includes(kind) ? Math.floor(total / only.length) : 0]),
    );
  }
  const share = { signIn: 1 / 16, refresh: 1 / 4, upload: 1 / 8, download: 3 / 16 };
  const counts = Object.fromEntries(
    Object.entries(share).map(([kind, s]) => [kind, Math.max(1, Math.round(total * s))]),
  );
  const rest = total - Object.values(counts).reduce((a, b) => a + b, 0);
  return {
    signIn: counts.signIn,
    refresh: counts.refresh,
    user: rest,
    upload: counts.upload,
    download: counts.download,
  };
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/**
 * The workerd process Miniflare started for this run: our own child whose command is `workerd` (Miniflare keeps
 * the handle private). Linux: /proc; elsewhere `ps`, which macOS has and Windows has not (memory then "n/a").
 */
function workerdPid() {
  if (process.platform === "linux") {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        // pid (comm) state ppid …: comm may hold spaces, so split after its closing parenthesis.
        const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        if (comm === "workerd" && ppid === process.pid) return Number(entry);
      } catch {
        // the process ended while we looked
      }
    }
    return null;
  }
  try {
    const rows = execFileSync("ps", ["-A", "-o", "pid=,ppid=,comm="], { encoding: "utf8" }).split("\n");
    for (const row of rows) {
      const [pid, ppid, ...command] = row.trim().split(/\s+/);
      if (Number(ppid) === process.pid && command.join(" ").endsWith("workerd")) return Number(pid);
    }
  } catch {
    // no ps (Windows)
  }
  return null;
}

/** Resident memory of `pid` in MB: VmRSS of /proc/<pid>/status on Linux, `ps -o rss=` elsewhere. */
function rssMb(pid) {
  if (pid === null) return null;
  try {
    if (process.platform === "linux") {
      const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
      return kb ? Number(kb) / 1024 : null;
    }
    return Number(execFileSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" }).trim()) / 1024;
  } catch {
    return null;
  }
}

/**
 * CPU seconds (user + system) `pid` has used, from /proc/<pid>/stat (fields 14 and 15, in clock ticks of 100 Hz on
 * Linux); null elsewhere. Per minute and per request it tells a Worker that got dearer from a machine that gave it
 * less time.
 */
function cpuSeconds(pid) {
  if (pid === null || process.platform !== "linux") return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/** The machine's CPU time by state since boot (/proc/stat's first line, in ticks); null off Linux. */
function machineTicks() {
  if (process.platform !== "linux") return null;
  try {
    const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync("/proc/stat", "utf8")
      .split("\n")[0]
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return { busy: user + nice + system + irq + softirq, idle, iowait, steal: steal ?? 0 };
  } catch {
    return null;
  }
}

/** Shares of the machine's time between two `machineTicks()` readings, in per cent. */
function machineShares(before, after) {
  if (!before || !after) return null;
  const delta = Object.fromEntries(Object.keys(after).map((key) => [key, after[key] - before[key]]));
  const total = delta.busy + delta.idle + delta.iowait + delta.steal || 1;
  return {
    busySeconds: delta.busy / 100,
    busy: (100 * delta.busy) / total,
    iowait: (100 * delta.iowait) / total,
    steal: (100 * delta.steal) / total,
  };
}

/**
 * Files and bytes the local runtime keeps under `root` (D1's SQLite, one SQLite database per Durable Object, R2's
 * blobs): what grows with every sign-in and upload of the run, the first suspect of a slowdown that comes late.
 */
function storageOf(root) {
  let files = 0;
  let bytes = 0;
  const walk = (path) => {
    let entries;
    try {
      entries = readdirSync(path, { withFileTypes: true });
    } catch {
      return; // removed while we counted
    }
    for (const entry of entries) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile()) {
        files++;
        try {
          bytes += statSync(child).size;
        } catch {
          // a WAL file checkpointed away while we counted
        }
      }
    }
  };
  walk(root);
  return files === 0 ? null : { files, bytes };
}

/** A minimal Chrome DevTools Protocol client over the inspector's WebSocket (as bench/profile.mjs). */
async function inspector(url) {
  // Miniflare's inspector proxy accepts only local origins, as DevTools would send.
  const socket = new WebSocket(url, { headers: { origin: "http://localhost" } });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the inspector at ${url} did not answer in 10 s`)),
      10_000,
    );
    socket.onopen = () => {
      clearTimeout(timer);
      resolve();
    };
    socket.onerror = (event) => {
      clearTimeout(timer);
      reject(new Error(`the inspector at ${url}: ${event.message ?? "connection failed"}`));
    };
    socket.onclose = () => {
      clearTimeout(timer);
      reject(new Error(`the inspector at ${url} closed the connection`));
    };
  });
  let nextId = 1;
  const pending = new Map();
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  };
  return {
    send(method, params = {}) {
      const id = nextId++;
      socket.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`the inspector did not answer ${method} in 30 s`));
        }, 30_000);
        pending.set(id, (message) => {
          clearTimeout(timer);
          resolve(message);
        });
      });
    },
    close: () => socket.close(),
  };
}

/**
 * Memory, read from outside the Worker: workerd's resident set (the whole process: both Workers' isolates, SQLite of
 * D1 and the Durable Objects, the runtime) and, through the V8 inspector, the main Worker isolate's live heap right
 * after a full collection (`HeapProfiler.collectGarbage`, then `Runtime.getHeapUsage`): what a leak keeps, without
 * the garbage of the moment. The collection pauses the isolate for a few ms once a minute.
 */
/** The least-squares slope of `key` over the samples' minutes, times the minutes they span: growth without noise. */
function trend(samples, key) {
  const points = samples.filter((sample) => sample[key] !== null);
  if (points.length < 2) return 0;
  const n = points.length;
  const meanX = points.reduce((sum, p) => sum + p.minute, 0) / n;
  const meanY = points.reduce((sum, p) => sum + p[key], 0) / n;
  const sxy = points.reduce((sum, p) => sum + (p.minute - meanX) * (p[key] - meanY), 0);
  const sxx = points.reduce((sum, p) => sum + (p.minute - meanX) ** 2, 0);
  return (sxy / sxx) * (points.at(-1).minute - points[0].minute);
}

/**
 * Throughput held (issue 48): the mean requests/s of the last ten minutes within THROUGHPUT_BOUND of minutes 5–15's.
 * A shorter run compares its last quarter with the minutes from warm up to its half. Null when the run is too short
 * for the two spans to be apart.
 */
const THROUGHPUT_BOUND = 0.1;
function throughputVerdict(samples) {
  const minutes = samples.filter((sample) => sample.minute > 0);
  const end = minutes.length;
  const late = Math.min(10, Math.floor(end / 4));
  const early = [WARM_MINUTE, Math.min(15, Math.floor(end / 2))];
  if (late < 1 || early[1] <= early[0] || early[1] > end - late) return null;
  const mean = (list) => list.reduce((sum, s) => sum + s.requests, 0) / list.length / 60;
  const reference = mean(minutes.filter((s) => s.minute >= early[0] && s.minute <= early[1]));
  const last = mean(minutes.slice(end - late));
  const change = last / reference - 1;
  const held = Math.abs(change) <= THROUGHPUT_BOUND;
  const line = `throughput: ${reference.toFixed(1)} req/s in minutes ${early[0]}–${early[1]}, ${last.toFixed(1)} in the last ${late} (${change >= 0 ? "+" : ""}${(100 * change).toFixed(1)} %, bound ±${100 * THROUGHPUT_BOUND} %, ${held ? "within the bound" : "outside the bound"})`;
  return { line, problem: held ? null : `throughput moved by ${(100 * change).toFixed(1)} %` };
}

/** Minutes between two readings of the memory's parts (an inspector session opened on each other isolate). */
const PARTS_EVERY = 5;

/** How each part of the resident memory moved from the warm minute's reading to the last one. */
function partsGrowth(samples) {
  const read = samples.filter((sample) => sample.parts && sample.minute >= WARM_MINUTE);
  if (read.length < 2) return null;
  const [from, to] = [read[0], read.at(-1)];
  const delta = (a, b) =>
    a === null || a === undefined || b === null || b === undefined
      ? "n/a"
      : `${b - a >= 0 ? "+" : ""}${(b - a).toFixed(0)} MB`;
  const change = (get) => delta(get(from.parts), get(to.parts));
  // The anonymous memory outside every isolate's heap: the runtime's own (its allocator: SQLite, its C++, V8's
  // off-heap buffers), WASM memories, V8's code.
  const rest = (sample) =>
    sample.committed === null || sample.parts.anonymous === undefined
      ? null
      : sample.parts.anonymous - sample.parts.isolates.committed - sample.committed;
  return [
    `memory by part, minute ${from.minute} to ${to.minute}: RSS ${delta(from.rss, to.rss)},`,
    `anonymous ${change((p) => p.anonymous)}: the other isolates' committed heaps ${change((p) => p.isolates.committed)},`,
    `the Worker's isolate heap ${delta(from.heap, to.heap)} live, ${delta(from.committed, to.committed)} committed,`,
    `the rest (the runtime's allocator: SQLite, its C++, V8's off-heap memory; WASM memories; code) ${delta(rest(from), rest(to))}`,
  ].join(" ");
}

async function memory(cdp, pid, wake) {
  const rss = rssMb(pid);
  if (!cdp) return { rss, heap: null };
  // workerd dispatches the inspector's messages when the isolate runs: an idle one (before the load starts) answers
  // once a request enters it, so a request every 100 ms keeps it entering while the two calls are answered.
  const poke = setInterval(() => wake().catch(() => {}), 100);
  try {
    await cdp.send("HeapProfiler.collectGarbage");
    const { result } = await cdp.send("Runtime.getHeapUsage");
    // Newer V8s also report the ArrayBuffers' backing stores (request and answer bodies, WASM memory is not among
    // them) and the embedder's heap: memory the isolate holds outside its JavaScript heap.
    const outside = (key) => (typeof result?.[key] === "number" ? result[key] / 2 ** 20 : null);
    return {
      rss,
      heap: result ? result.usedSize / 2 ** 20 : null,
      // The heap's committed size: what the resident set holds for it, live or not.
      committed: result ? result.totalSize / 2 ** 20 : null,
      backing: outside("backingStorageSize"),
      embedder: outside("embedderHeapUsedSize"),
    };
  } finally {
    clearInterval(poke);
  }
}

async function post(base, path, body, token) {
  const headers = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

function jpeg(width, height, seed) {
  const pixels = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    const x = i % width;
    const y = Math.floor(i / width);
    pixels.set([(x + seed) & 255, (y * 2 + seed) & 255, (x + y + seed * 3) & 255, 255], i * 4);
  }
  const image = new PhotonImage(pixels, width, height);
  const bytes = image.get_bytes_jpeg(85);
  image.free();
  return bytes;
}

/** A multipart body of one file, as a browser's FormData sends it, made once (autocannon sends bytes). */
function multipart(bytes, name, type) {
  const boundary = "----soak-boundary-7d1f3a";
  const head = `--${boundary}\r\ncontent-disposition: form-data; name="bucket-id"\r\n\r\nsoak\r\n--${boundary}\r\ncontent-disposition: form-data; name="file[]"; filename="${name}"\r\ncontent-type: ${type}\r\n\r\n`;
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    body: Buffer.concat([Buffer.from(head), Buffer.from(bytes), Buffer.from(`\r\n--${boundary}--\r\n`)]),
  };
}

const percentile = (sorted, p) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
const mb = (value) => (value === null ? "n/a" : `${value.toFixed(1)} MB`);
const KINDS = ["signIn", "refresh", "user", "upload", "download"];
const LABELS = {
  signIn: "sign-in",
  refresh: "refresh",
  user: "user",
  upload: "upload",
  download: "download",
};

/** Everything one minute saw, by kind, and the run's failures. */
const newMinute = () => ({
  latencies: [],
  counts: Object.fromEntries(KINDS.map((kind) => [kind, 0])),
  non2xx: 0,
  errors: 0,
  firstFailures: [],
});
let minute = newMinute();
let measuring = false;
const failures = { non2xx: 0, errors: 0, shown: 0 };

function failure(kind, text) {
  if (minute.firstFailures.length < 3) minute.firstFailures.push(`${LABELS[kind]}: ${text.slice(0, 300)}`);
}

/** One autocannon instance per kind, for as long as the run lasts; every answer lands in the current minute. */
function drive(kind, connections, options) {
  const instance = autocannon(
    { connections, duration: MINUTES * 60 + 3600, timeout: 30, ...options },
    () => {},
  );
  instance.on("response", (_client, status, _bytes, ms) => {
    if (!measuring) return;
    minute.counts[kind]++;
    minute.latencies.push(ms);
    if (status < 200 || status >= 300) minute.non2xx++;
  });
  instance.on("reqError", (error) => {
    if (!measuring) return;
    minute.errors++;
    failure(kind, `socket error or timeout: ${error.message}`);
  });
  return instance;
}

/** An answer's body, for the first failures of a minute (autocannon hands bodies only to `onResponse`). */
const watch = (kind, onOk = () => {}) => ({
  onResponse: (status, body) => {
    if (status >= 200 && status < 300) onOk(body);
    else if (measuring) failure(kind, `${status} ${body}`);
  },
});

const dir = mkdtempSync(join(tmpdir(), "edge-auth-soak-"));
// Miniflare keeps D1, every Durable Object's SQLite and R2's blobs in a directory it makes under the system's temporary
// one: under the run's own, on the same disk as before, so that `storageOf` counts them and the end removes them.
const runtimeStorage = join(dir, "runtime");
mkdirSync(runtimeStorage);
process.env.TMPDIR = runtimeStorage;
let mf = null;
let cdp = null;
let pid = null;
const instances = [];
let interrupted = false;
let wake = () => {};

// Ctrl-C (or a TERM) ends the run at once: the minute so far is dropped, the verdict is printed on what was seen,
// and the `finally` below disposes workerd and removes the temporary directory. A second Ctrl-C leaves at once,
// still removing both (`exit` below).
const stop = (signal) => {
  if (interrupted) process.exit(130);
  interrupted = true;
  process.stderr.write(`\n${signal}: stopping…\n`);
  wake();
};
process.on("SIGINT", () => stop("SIGINT"));
process.on("SIGTERM", () => stop("SIGTERM"));
process.on("exit", () => {
  if (pid !== null && mf !== null) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

const sleepUntil = (at) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, at - Date.now()));
    wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });

try {
  process.stderr.write("bundling…\n");
  bundle(join(dir, "build"));
  const secrets = generateSecrets();
  const inspectorPort = await freePort();
  mf = workerFromBundle(
    dir,
    { ...secrets, ...LIMITS_RAISED, AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false" },
    { inspectorPort },
  );
  const origin = (await mf.ready).origin;
  pid = workerdPid();
  const auth = `${origin}/auth/v1`;
  const storage = `${origin}/storage/v1`;
  const wake = () => fetch(`${auth}/healthz`).then((response) => response.arrayBuffer());
  await applyMigrations(mf);

  process.stderr.write(
    `preparing ${2 * USERS} users (${USERS} signing in, ${USERS} refreshing), sessions and files…\n`,
  );
  const emails = Array.from({ length: USERS }, (_, i) => `soak-${i}@example.com`);
  // The refresh pool's sessions belong to users of their own who never sign in during the run. The sign-in
  // connections sign each of `emails` in about once a second, past AUTH_MAX_SESSIONS_PER_USER (200) within minutes,
  // and each sign-in past it ends the user's least recently used session; a refresh writes no D1 (a session's
  // `lastUsedAt` is kept to the hour), so the pool's sessions would be the ones ended, 401 from minute 5 on.
  const poolEmails = Array.from({ length: USERS }, (_, i) => `soak-pool-${i}@example.com`);
  const accessTokens = [];
  for (const email of [...emails, ...poolEmails]) {
    accessTokens.push(
      (await post(auth, "/signup/email-password", { email, password: PASSWORD })).session.accessToken,
    );
  }
  const connections = split(CONNECTIONS);
  const pool = [];
  for (let i = 0; i < connections.refresh * 2; i++) {
    const { session } = await post(auth, "/signin/email-password", {
      email: poolEmails[i % USERS],
      password: PASSWORD,
    });
    pool.push(session.refreshToken);
  }
  // Session checks and uploads send the newest access tokens, as clients do: refreshes and sign-ins renew them, so
  // none expires during the run (15 min by default).
  let nextToken = 0;
  const freshToken = () => accessTokens[nextToken++ % accessTokens.length];
  const keepToken = (token) => {
    accessTokens.push(token);
    if (accessTokens.length > 64) accessTokens.shift();
  };

  process.stderr.write("uploading and transforming the photos…\n");
  const admin = { "content-type": "application/json", "x-hasura-admin-secret": secrets.AUTH_ADMIN_SECRET };
  const bucket = await fetch(`${storage}/buckets`, {
    method: "POST",
    headers: admin,
    body: JSON.stringify({
      id: "soak",
      rules: { upload: "authenticated", read: "public", update: "owner", delete: "owner" },
    }),
  });
  if (bucket.status !== 201) throw new Error(`bucket: ${bucket.status} ${await bucket.text()}`);
  const photos = [];
  for (let i = 0; i < 4; i++) {
    const form = new FormData();
    form.append("bucket-id", "soak");
    form.append("file[]", new Blob([jpeg(800, 600, i * 40)], { type: "image/jpeg" }), `photo-${i}.jpg`);
    const response = await fetch(`${storage}/files`, {
      method: "POST",
      headers: { authorization: `Bearer ${accessTokens[0]}` },
      body: form,
    });
    if (response.status !== 201) throw new Error(`upload: ${response.status} ${await response.text()}`);
    photos.push((await response.json()).processedFiles[0].id);
  }
  for (const id of photos) {
    const warm = await fetch(`${storage}/files/${id}?w=300`);
    if (!warm.ok) throw new Error(`download: ${warm.status} ${await warm.text()}`);
    await warm.arrayBuffer();
  }
  const upload = multipart(jpeg(96, 72, 9), "small.jpg", "image/jpeg");

  process.stderr.write("reading the isolate's heap through the inspector…\n");
  try {
    cdp = await inspector(`ws://127.0.0.1:${inspectorPort}/edge-auth`);
  } catch (error) {
    process.stderr.write(`no inspector (${error.message ?? error}): the isolate's heap is not read\n`);
  }

  const json = { "content-type": "application/json" };
  let nextUser = 0;
  let downloads = 0;
  let fresh = 0;
  const refresh = rotatingRefresh(auth, pool);
  const [refreshRequest] = refresh.requests;
  refresh.requests = [
    {
      ...refreshRequest,
      onResponse: (status, body) => {
        refreshRequest.onResponse(status, body);
        if (status === 200) keepToken(JSON.parse(body).accessToken);
        else if (measuring) failure("refresh", `${status} ${body}`);
      },
    },
  ];
  const plans = {
    signIn: {
      url: `${auth}/signin/email-password`,
      requests: [
        {
          method: "POST",
          headers: json,
          setupRequest: (request) => ({
            ...request,
            body: JSON.stringify({ email: emails[nextUser++ % USERS], password: PASSWORD }),
          }),
          ...watch("signIn", (body) => keepToken(JSON.parse(body).session.accessToken)),
        },
      ],
    },
    refresh,
    user: {
      url: `${auth}/user`,
      requests: [
        {
          method: "GET",
          setupRequest: (request) => ({
            ...request,
            headers: { ...request.headers, authorization: `Bearer ${freshToken()}` },
          }),
          ...watch("user"),
        },
      ],
    },
    upload: {
      url: `${storage}/files`,
      requests: [
        {
          method: "POST",
          body: upload.body,
          setupRequest: (request) => ({
            ...request,
            headers: {
              ...request.headers,
              "content-type": upload.contentType,
              authorization: `Bearer ${freshToken()}`,
            },
          }),
          ...watch("upload"),
        },
      ],
    },
    download: {
      url: `${storage}/files/${photos[0]}?w=300`,
      requests: [
        {
          method: "GET",
          setupRequest: (request) => {
            const id = photos[downloads % photos.length];
            // Every FRESH_VARIANT_EVERY-th download asks for a variant not made yet: the transformer decodes,
            // resizes and encodes, and R2's variant cache grows, for the whole run.
            const n = downloads++ % FRESH_VARIANT_EVERY === 0 ? fresh++ : -1;
            const query = n < 0 ? "w=300" : `w=${100 + (n % 400)}&q=${90 - (Math.floor(n / 400) % 60)}`;
            return { ...request, path: `/storage/v1/files/${id}?${query}` };
          },
          ...watch("download"),
        },
      ],
    },
  };

  // What the resident memory is made of (soak-memory-parts.mjs), at the start, the warm minute, every
  // PARTS_EVERY minutes and the last: the soak's own isolate is the heap line.
  const parts = memoryParts(pid, [":edge-auth"]);
  const partsAt = (m) => m === 0 || m === WARM_MINUTE || m % PARTS_EVERY === 0 || m === MINUTES;
  const before = { ...(await memory(cdp, pid, wake)), parts: await parts.read() };
  console.log(
    `soak: ${MINUTES} min, ${CONNECTIONS} connections (${KINDS.map((k) => `${LABELS[k]} ${connections[k]}`).join(", ")}), workerd pid ${pid ?? "not found"}`,
  );
  console.log(
    `memory before load: workerd RSS ${mb(before.rss)}, Worker isolate heap ${mb(before.heap)} (live, after a full GC)`,
  );
  console.log(`        ${partsLine(before.parts)}`);
  const samples = [{ minute: 0, ...before }];
  let lastCpu = { workerd: cpuSeconds(pid), soak: process.cpuUsage(), machine: machineTicks() };
  const start = Date.now();
  measuring = true;
  for (const kind of KINDS) {
    if (connections[kind] > 0) instances.push(drive(kind, connections[kind], plans[kind]));
  }

  for (let m = 1; m <= MINUTES && !interrupted; m++) {
    await sleepUntil(start + m * 60_000);
    if (interrupted) break;
    const seen = minute;
    minute = newMinute();
    const seconds = 60;
    const sorted = Float64Array.from(seen.latencies).sort();
    const total = KINDS.reduce((sum, kind) => sum + seen.counts[kind], 0);
    const cpu = { workerd: cpuSeconds(pid), soak: process.cpuUsage(), machine: machineTicks() };
    const shares = machineShares(lastCpu.machine, cpu.machine);
    const workerdCpu =
      cpu.workerd === null || lastCpu.workerd === null ? null : cpu.workerd - lastCpu.workerd;
    const soakCpu = (cpu.soak.user + cpu.soak.system - lastCpu.soak.user - lastCpu.soak.system) / 1e6;
    lastCpu = cpu;
    const sample = {
      minute: m,
      ...(await memory(cdp, pid, wake)),
      requests: total,
      byKind: seen.counts,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      workerdCpu,
      soakCpu,
      machine: shares,
      storage: storageOf(runtimeStorage),
      load: loadavg()[0],
      parts: partsAt(m) ? await parts.read() : null,
    };
    samples.push(sample);
    failures.non2xx += seen.non2xx;
    failures.errors += seen.errors;
    console.log(
      `min ${String(m).padStart(2)}  ${KINDS.map((k) => `${LABELS[k]} ${(seen.counts[k] / seconds).toFixed(1)}`).join("  ")}  total ${(total / seconds).toFixed(1)} req/s  p50 ${percentile(sorted, 50).toFixed(0)} ms  p99 ${percentile(sorted, 99).toFixed(0)} ms  non-2xx ${seen.non2xx}  errors ${seen.errors}  RSS ${mb(sample.rss)}  heap ${mb(sample.heap)}${sample.backing === null ? "" : ` (+ buffers ${mb(sample.backing)}, embedder ${mb(sample.embedder)})`}`,
    );
    console.log(
      `        workerd CPU ${workerdCpu === null ? "n/a" : `${workerdCpu.toFixed(1)} s (${((1000 * workerdCpu) / Math.max(1, total)).toFixed(2)} ms/request)`}  soak's own CPU ${soakCpu.toFixed(1)} s  machine ${shares ? `busy ${shares.busy.toFixed(0)} % (others ${Math.max(0, shares.busySeconds - (workerdCpu ?? 0) - soakCpu).toFixed(1)} s), iowait ${shares.iowait.toFixed(1)} %, steal ${shares.steal.toFixed(1)} %` : "n/a"}  load ${sample.load.toFixed(2)}  local storage ${sample.storage ? `${sample.storage.files} files, ${(sample.storage.bytes / 2 ** 20).toFixed(0)} MB` : "n/a"}`,
    );
    if (sample.parts) console.log(`        ${partsLine(sample.parts)}`);
    for (const line of seen.firstFailures) console.log(`        ${line}`);
  }
  if (flags.json) writeFileSync(flags.json, `${JSON.stringify(samples, null, 1)}\n`);
  measuring = false;
  for (const instance of instances) instance.stop();

  // The verdict.
  const last = samples.at(-1);
  const warm = samples.find((s) => s.minute === WARM_MINUTE);
  const problems = [];
  if (failures.non2xx > 0 || failures.errors > 0) {
    problems.push(`${failures.non2xx} non-2xx answers, ${failures.errors} socket errors or timeouts`);
  }
  if (interrupted) problems.push("interrupted before the end: the memory bound is not judged");
  else if (!warm || last.minute <= WARM_MINUTE) problems.push("too short to judge memory");
  else {
    for (const [key, name, bound] of [
      ["heap", "Worker isolate heap", HEAP_BOUND_MB],
      ["rss", "workerd RSS", RSS_BOUND_MB],
    ]) {
      if (warm[key] === null || last[key] === null) {
        console.log(`${name}: not available on this platform, not judged`);
        continue;
      }
      const growth = trend(
        samples.filter((sample) => sample.minute >= WARM_MINUTE),
        key,
      );
      const verdict = growth > bound ? "over the bound" : "within the bound";
      console.log(
        `${name}: ${mb(warm[key])} at minute ${WARM_MINUTE}, ${mb(last[key])} at minute ${last.minute}; trend over those minutes ${growth >= 0 ? "+" : ""}${growth.toFixed(1)} MB (bound +${bound} MB, ${verdict})`,
      );
      if (growth > bound)
        problems.push(`${name} grew by ${growth.toFixed(1)} MB after minute ${WARM_MINUTE}`);
    }
  }
  const growth = partsGrowth(samples);
  if (growth) console.log(growth);
  if (!interrupted) {
    const judged = throughputVerdict(samples);
    if (judged) {
      console.log(judged.line);
      if (judged.problem) problems.push(judged.problem);
    } else
      console.log("throughput: too short to judge (it needs the late minutes apart from the early ones)");
  }
  if (problems.length > 0) {
    console.log(`\nsoak FAILED: ${problems.join("; ")}`);
    process.exitCode = 1;
  } else {
    console.log(`\nsoak passed: ${MINUTES} min, every answer 2xx, throughput and memory within their bounds`);
  }
} finally {
  measuring = false;
  for (const instance of instances) instance.stop();
  cdp?.close();
  await mf?.dispose();
  mf = null;
  rmSync(dir, { recursive: true, force: true });
}
