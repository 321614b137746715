// Replays one day of sign-ins, refreshes, session checks and sign-ups over N D1 shards, and prints the load each
// database gets (docs/scaling.md, "Past one D1 database"). Users go to shards the way the sharding code sends them:
// the first 12 bits of SHA-256(user id) name one of 4,096 slots, and slots are split into N contiguous ranges, one per
// shard. The directory is sharded the same way by its keys (src/db/directory.ts): a key is SHA-256 of what it names,
// so its first 12 bits are a slot too, and it lives in that slot's shard. Lookups that arrive by email, phone,
// provider identity or PAT read the key's shard first; a sign-up claims its email there, then creates the user in its
// shard.
//
//   node scripts/simulate-shards.mjs --users 10000000 --shards 8 [--seed 1] [--budget 100] [--per-shard-hours]
//   node scripts/simulate-shards.mjs --users 100000000 --shards 128 --replay-shards 4 --check
//
// `--replay-shards k` replays k of the shards, evenly spread, each with the users hashing would give it (a binomial
// count) and the directory keys of its slots (by symmetry, as many as its users bring): a shard's load depends only on
// its own users, so 100 M users over 128 shards take seconds, not the ten minutes hashing 100 M ids takes.
// `--check` exits 1 when a database is over one of D1's limits: 10 GB, the write budget, the read budget of a primary.
//
// Deterministic for a seed. Every per-operation figure below is from docs/scaling.md (measured by
// scripts/measure-row-bytes.mjs); the behaviour figures (who is active, for how long) are assumptions stated there.
import { createHash } from "node:crypto";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    users: { type: "string", default: "10000000" },
    shards: { type: "string", default: "8" },
    seed: { type: "string", default: "1" },
    /** Write commits per second one D1 primary is allowed at the peak minute (docs/scaling.md: several ms a write). */
    budget: { type: "string", default: "100" },
    /** Share of users who sign in on the day. */
    active: { type: "string", default: "0.3" },
    /** New users on the day, as a share of the users there are. */
    "signup-rate": { type: "string", default: "0.002" },
    /** Busiest hour over the day's mean rate. */
    "peak-ratio": { type: "string", default: "3" },
    /** D1 bytes per user in a shard (measured: the typical mix with a month of audit events). */
    "bytes-per-user": { type: "string", default: "26388" },
    /** Directory bytes per user (measured: 3 entries, email, provider identity, PAT). */
    "directory-bytes-per-user": { type: "string", default: "547" },
    /** Directory keys per user (measured: email, provider identity, PAT), each in the shard of its own slot. */
    "directory-keys": { type: "string", default: "3" },
    /** Point reads per second one D1 primary is allowed at the peak minute (docs/scaling.md: ~1 ms a read). */
    "read-budget": { type: "string", default: "1000" },
    "replay-shards": { type: "string" },
    check: { type: "boolean", default: false },
    "all-shards": { type: "boolean", default: false },
    "per-shard-hours": { type: "boolean", default: false },
  },
});
const USERS = Number(args.users);
const SHARDS = Number(args.shards);
const BUDGET = Number(args.budget);
const ACTIVE = Number(args.active);
const SIGNUPS = Math.round(USERS * Number(args["signup-rate"]));
const PEAK_RATIO = Number(args["peak-ratio"]);
const BYTES_PER_USER = Number(args["bytes-per-user"]);
const DIRECTORY_BYTES_PER_USER = Number(args["directory-bytes-per-user"]);
const DIRECTORY_KEYS = Number(args["directory-keys"]);
const READ_BUDGET = Number(args["read-budget"]);
/** Shards replayed (default: all). Fewer: each replayed shard gets the users hashing would give it, and the others are not built. */
const REPLAYED = Math.min(SHARDS, Number(args["replay-shards"] ?? SHARDS));
/** The D1 limit per database (the planning line is half of it). */
const LIMIT_GB = 10;
/** The planning line: half of D1's 10 GB, the rest is headroom for growth and for moving slots. */
const PLANNED_GB = 5;
const SLOTS = 4096;
const MINUTES = 1440;

/** D1 write commits (statements or batches, each one transaction at the primary) per operation: docs/scaling.md. */
const COMMITS = {
  signIn: 4, // session + last_seen batch, audit event, outbox claim, outbox delete
  touch: 1, // a refresh's hourly `sessions.last_used_at`
  signUp: 5, // user, verification ticket, audit event, outbox claim, outbox delete
  verify: 6, // ticket, email verified, session batch, audit event, outbox claim, outbox delete
  directoryClaim: 1, // one batch in the key's shard: INSERT … ON CONFLICT DO NOTHING, then who holds the key
};
/** D1 reads per operation (primary or replica). */
const READS = { signIn: 1, refresh: 1, check: 1, signUp: 1, verify: 1, directoryLookup: 1 };
const REFRESHES_PER_HOUR = 4; // 15-minute access tokens
const CHECKS_PER_ACTIVE_USER = 20; // GET /user a day
const VERIFY_SHARE = 0.8; // sign-ups whose link is followed, ~10 minutes later

// sfc32, seeded: the same day for the same seed.
let [a, b, c, d] = [0x9e3779b9, 0x243f6a88, 0xb7e15162, Number(args.seed) >>> 0];
function random() {
  a >>>= 0;
  b >>>= 0;
  c >>>= 0;
  d >>>= 0;
  const t = (a + b + d) >>> 0;
  d = (d + 1) >>> 0;
  a = b ^ (b >>> 9);
  b = (c + (c << 3)) >>> 0;
  c = ((c << 21) | (c >>> 11)) + t;
  return t / 4294967296;
}
for (let i = 0; i < 12; i++) random();
const hex = (n) => {
  let s = "";
  for (let i = 0; i < n; i++) s += ((random() * 16) | 0).toString(16);
  return s;
};
const newUserId = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${"89ab"[(random() * 4) | 0]}${hex(3)}-${hex(12)}`;

/** The routing the sharding code will use: slot = first 12 bits of SHA-256(user id); slots split into N ranges. */
function slotOf(userId) {
  const digest = createHash("sha256").update(userId).digest();
  return (digest[0] << 4) | (digest[1] >> 4);
}
const shardOfSlot = (slot) => Math.floor((slot * SHARDS) / SLOTS);
/** How many of the 4,096 slots a shard holds (contiguous ranges: equal for a power of two). */
const SLOTS_OF = (shard) => Math.ceil(((shard + 1) * SLOTS) / SHARDS) - Math.ceil((shard * SLOTS) / SHARDS);
const replayedShards = Array.from({ length: REPLAYED }, (_, i) => Math.floor((i * SHARDS) / REPLAYED));

// The diurnal curve: a von Mises bump peaking at 20:30, its concentration chosen so the busiest hour is PEAK_RATIO
// times the day's mean. Minute weights, then a cumulative table to draw event times from.
function minuteWeights(k) {
  return Array.from({ length: MINUTES }, (_, m) =>
    Math.exp(k * Math.cos((2 * Math.PI * (m / 60 - 20.5)) / 24)),
  );
}
function hourlyPeakRatio(weights) {
  const hours = Array.from({ length: 24 }, (_, h) =>
    weights.slice(h * 60, h * 60 + 60).reduce((x, y) => x + y, 0),
  );
  return Math.max(...hours) / (hours.reduce((x, y) => x + y, 0) / 24);
}
let [lo, hi] = [0, 20];
for (let i = 0; i < 60; i++) {
  const mid = (lo + hi) / 2;
  if (hourlyPeakRatio(minuteWeights(mid)) < PEAK_RATIO) lo = mid;
  else hi = mid;
}
const weights = minuteWeights(lo);
const cumulative = new Float64Array(MINUTES);
weights.reduce((sum, w, m) => {
  cumulative[m] = sum + w;
  return cumulative[m];
}, 0);
function drawMinute() {
  const target = random() * cumulative[MINUTES - 1];
  let [l, h] = [0, MINUTES - 1];
  while (l < h) {
    const mid = (l + h) >> 1;
    if (cumulative[mid] < target) l = mid + 1;
    else h = mid;
  }
  return l;
}
/** Hours an active user keeps the app open after signing in: 60 % one, 25 % two or three, 15 % four to eight. */
function hoursOpen() {
  const r = random();
  if (r < 0.6) return 1;
  if (r < 0.85) return 2 + ((random() * 2) | 0);
  return 4 + ((random() * 5) | 0);
}

// Per shard and minute: all its writes and reads, and the directory's share of them; per shard, its users and keys.
const writes = new Float64Array(SHARDS * MINUTES);
const reads = new Float64Array(SHARDS * MINUTES);
const dirWrites = new Float64Array(SHARDS * MINUTES);
const dirReads = new Float64Array(SHARDS * MINUTES);
const usersPerShard = new Float64Array(SHARDS);
const keysPerShard = new Float64Array(SHARDS);
const at = (shard, minute) => shard * MINUTES + (minute % MINUTES);
const totals = { signIns: 0, refreshes: 0, checks: 0, signUps: 0, verifications: 0 };
/** A directory key's shard: its slot is the first 12 bits of a SHA-256, uniform like a draw (among the replayed). */
const keyShard = () =>
  REPLAYED === SHARDS ? shardOfSlot((random() * SLOTS) | 0) : replayedShards[(random() * REPLAYED) | 0];
/** A user's keys, each in the shard of its own slot; the first is the one a sign-in looks up (the email). */
function placeKeys() {
  let first = 0;
  for (let k = 0; k < DIRECTORY_KEYS; k++) {
    const shard = keyShard();
    keysPerShard[shard] += 1;
    if (k === 0) first = shard;
  }
  return first;
}
const add = (series, shard, minute, n) => {
  series[at(shard, minute)] += n;
};

/** One user's day in `shard`: a sign-in by a directory key, refreshes and session checks while the app is open. */
function replayUser(shard) {
  usersPerShard[shard] += 1;
  const emailShard = placeKeys();
  if (random() >= ACTIVE) return;
  // A sign-in: one directory lookup (email, phone, provider or PAT) in the key's shard, then the user's shard.
  const start = drawMinute();
  totals.signIns += 1;
  add(dirReads, emailShard, start, READS.directoryLookup);
  add(reads, emailShard, start, READS.directoryLookup);
  add(writes, shard, start, COMMITS.signIn);
  add(reads, shard, start, READS.signIn);
  const open = hoursOpen();
  // Refreshes every 15 minutes while the app is open, each 1 replica read; the hourly touch is a write.
  for (let k = 1; k <= open * REFRESHES_PER_HOUR; k++) {
    add(reads, shard, start + 15 * k, READS.refresh);
    if (k % REFRESHES_PER_HOUR === 0) add(writes, shard, start + 15 * k, COMMITS.touch);
  }
  totals.refreshes += open * REFRESHES_PER_HOUR;
  for (let k = 0; k < CHECKS_PER_ACTIVE_USER; k++) {
    add(reads, shard, start + Math.floor((k * open * 60) / CHECKS_PER_ACTIVE_USER), READS.check);
  }
  totals.checks += CHECKS_PER_ACTIVE_USER;
}
/** A sign-up in `shard`: the email claimed in its key's shard (one batch), then the user in its own, then maybe verified. */
function replaySignUp(shard) {
  usersPerShard[shard] += 1;
  const emailShard = placeKeys();
  const minute = drawMinute();
  totals.signUps += 1;
  add(dirWrites, emailShard, minute, COMMITS.directoryClaim);
  add(writes, emailShard, minute, COMMITS.directoryClaim);
  add(writes, shard, minute, COMMITS.signUp);
  add(reads, shard, minute, READS.signUp);
  if (random() < VERIFY_SHARE) {
    totals.verifications += 1;
    add(writes, shard, minute + 10, COMMITS.verify);
    add(reads, shard, minute + 10, READS.verify);
  }
}
/** A normal draw (Box–Muller), for a shard's user count: binomial over the population, as hashing makes it. */
const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
const drawCount = (total, share) =>
  Math.max(0, Math.round(total * share + normal() * Math.sqrt(total * share * (1 - share))));

if (REPLAYED === SHARDS) {
  // Every user, routed by the hash of its id, as the service routes it.
  for (let i = 0; i < USERS; i++) replayUser(shardOfSlot(slotOf(newUserId())));
  for (let i = 0; i < SIGNUPS; i++) replaySignUp(shardOfSlot(slotOf(newUserId())));
} else {
  // Only some shards, each with the users hashing would give it (a binomial count; who they are does not matter).
  for (const shard of replayedShards) {
    const slots = SLOTS_OF(shard);
    for (let i = drawCount(USERS, slots / SLOTS); i > 0; i--) replayUser(shard);
    for (let i = drawCount(SIGNUPS, slots / SLOTS); i > 0; i--) replaySignUp(shard);
  }
}

// Reporting: per hour, the mean rate (per second) and the busiest minute's rate.
const perSecond = (perMinute) => perMinute / 60;
function hourStats(series, offset) {
  const out = [];
  for (let h = 0; h < 24; h++) {
    let sum = 0;
    let peak = 0;
    for (let m = h * 60; m < h * 60 + 60; m++) {
      sum += series[offset + m];
      peak = Math.max(peak, series[offset + m]);
    }
    out.push({ mean: sum / 3600, peak: perSecond(peak) });
  }
  return out;
}
const f = (n, digits = 1) => n.toFixed(digits).padStart(8);
const shardHours = replayedShards.map((s) => ({
  writes: hourStats(writes, s * MINUTES),
  reads: hourStats(reads, s * MINUTES),
}));
/** The directory's share of every shard, summed: its load over the deployment. */
const dirTotal = (series) => {
  const out = new Float64Array(MINUTES);
  for (const sh of replayedShards) for (let m = 0; m < MINUTES; m++) out[m] += series[sh * MINUTES + m];
  return out;
};
const dirHours = { writes: hourStats(dirTotal(dirWrites), 0), reads: hourStats(dirTotal(dirReads), 0) };
const n = (x) => Math.round(x).toLocaleString("en-US");

console.log(
  `users ${n(USERS)} + ${n(SIGNUPS)} sign-ups · shards ${SHARDS} (${SLOTS} slots; the directory's keys in the same shards) · seed ${args.seed}` +
    `${REPLAYED < SHARDS ? ` · ${REPLAYED} shards replayed` : ""} · active ${ACTIVE} · busiest hour ${PEAK_RATIO}× the mean · ` +
    `budgets per database: ${BUDGET} commits/s, ${READ_BUDGET} reads/s`,
);
console.log(
  `day${REPLAYED < SHARDS ? " (the replayed shards)" : ""}: ${n(totals.signIns)} sign-ins, ${n(totals.refreshes)} refreshes, ${n(totals.checks)} session checks, ` +
    `${n(totals.signUps)} sign-ups (${n(totals.verifications)} verified)\n`,
);
console.log("per hour (rates per second; 'peak' is the hour's busiest minute)");
console.log(
  "hour  shard writes: mean of shards  busiest shard mean  busiest shard peak   shard reads: mean  busiest peak   directory (these shards) writes mean/peak  reads mean/peak",
);
for (let h = 0; h < 24; h++) {
  const w = shardHours.map((x) => x.writes[h]);
  const r = shardHours.map((x) => x.reads[h]);
  const mean = (xs) => xs.reduce((x, y) => x + y, 0) / xs.length;
  console.log(
    `${String(h).padStart(2, "0")}:00 ${f(mean(w.map((x) => x.mean)))}                 ${f(Math.max(...w.map((x) => x.mean)))}          ${f(Math.max(...w.map((x) => x.peak)))}          ` +
      `${f(mean(r.map((x) => x.mean)))}    ${f(Math.max(...r.map((x) => x.peak)))}        ` +
      `${f(dirHours.writes[h].mean, 2)} /${f(dirHours.writes[h].peak, 2)}   ${f(dirHours.reads[h].mean)} /${f(dirHours.reads[h].peak)}`,
  );
}
if (args["per-shard-hours"]) {
  console.log("\nper shard and hour: writes/s mean/peak, reads/s mean");
  for (const [i, sh] of replayedShards.entries()) {
    console.log(
      `shard ${sh}: ${shardHours[i].writes.map((x, h) => `${h}h ${x.mean.toFixed(1)}/${x.peak.toFixed(1)} ${shardHours[i].reads[h].mean.toFixed(0)}`).join(" · ")}`,
    );
  }
}

console.log("\nper shard, over the day (storage: its users' rows and the directory keys of its slots)");
console.log(
  "shard      users  storage GB  (directory)   writes/s mean  writes/s peak (hour)   reads/s mean  reads/s peak  limits",
);
const day = [];
for (const sh of replayedShards) {
  let sum = 0;
  let peak = 0;
  let peakMinute = 0;
  let readSum = 0;
  let readPeak = 0;
  for (let m = 0; m < MINUTES; m++) {
    const w = writes[sh * MINUTES + m];
    sum += w;
    if (w > peak) [peak, peakMinute] = [w, m];
    readSum += reads[sh * MINUTES + m];
    readPeak = Math.max(readPeak, reads[sh * MINUTES + m]);
  }
  const dirGb = (keysPerShard[sh] * DIRECTORY_BYTES_PER_USER) / DIRECTORY_KEYS / 1e9;
  const row = {
    shard: sh,
    users: usersPerShard[sh],
    dirGb,
    gb: (usersPerShard[sh] * BYTES_PER_USER) / 1e9 + dirGb,
    mean: sum / 86_400,
    peak: perSecond(peak),
    hour: Math.floor(peakMinute / 60),
    readMean: readSum / 86_400,
    readPeak: perSecond(readPeak),
  };
  row.flags = [
    row.gb > LIMIT_GB ? "OVER 10 GB" : row.gb > PLANNED_GB ? `over the ${PLANNED_GB} GB plan` : "",
    row.peak > BUDGET ? "OVER write budget" : "",
    row.readPeak > READ_BUDGET ? "OVER read budget" : "",
  ]
    .filter(Boolean)
    .join(", ");
  day.push(row);
}
const line = (row) =>
  `${String(row.shard).padStart(5)} ${n(row.users).padStart(10)} ${f(row.gb, 2)}    ${f(row.dirGb, 3)}     ${f(row.mean, 1)}       ${f(row.peak, 1)} (${String(row.hour).padStart(2, "0")}h)     ${f(row.readMean, 1)}     ${f(row.readPeak, 1)}   ${row.flags || "ok"}`;
// Many shards: the three busiest at the peak minute and the range of the others (--all-shards: every one).
const shown =
  args["all-shards"] || REPLAYED <= 16 ? day : [...day].sort((x, y) => y.peak - x.peak).slice(0, 3);
for (const row of shown) console.log(line(row));
if (shown.length < day.length) {
  const others = day.filter((row) => !shown.includes(row));
  const span = (key, digits) =>
    `${Math.min(...others.map((row) => row[key])).toFixed(digits)}–${Math.max(...others.map((row) => row[key])).toFixed(digits)}`;
  console.log(
    `  (the other ${others.length}: ${span("gb", 2)} GB, ${span("peak", 1)} writes/s peak, ${span("readPeak", 1)} reads/s peak)`,
  );
}
const ratio = (key) => {
  const xs = day.map((row) => row[key]);
  return Math.max(...xs) / (xs.reduce((x, y) => x + y, 0) / xs.length);
};
const count = (test) => day.filter(test).length;
const over = count((row) => row.peak > BUDGET);
const overReads = count((row) => row.readPeak > READ_BUDGET);
const overSize = count((row) => row.gb > LIMIT_GB);
const full = count((row) => row.gb > PLANNED_GB);
const dirKeys = keysPerShard.reduce((x, y) => x + y, 0);
/** What the counts below are out of: every shard, or the replayed ones. */
const OF = REPLAYED === SHARDS ? `${SHARDS}` : `${REPLAYED} replayed (of ${SHARDS})`;
console.log(
  `\ndirectory: ${n(dirKeys)} keys over ${OF} shards, ${n(Math.max(...keysPerShard))} in the fullest ` +
    `(${((Math.max(...day.map((row) => row.dirGb)) / Math.max(...day.map((row) => row.gb))) * 100).toFixed(1)} % of its bytes); no database holds a key per user`,
);
console.log(
  `imbalance (max/mean over shards): users ${ratio("users").toFixed(3)} · writes/day ${ratio("mean").toFixed(3)} · peak-minute writes ${ratio("peak").toFixed(3)}`,
);
console.log(
  `shards over the write budget (${BUDGET}/s at the peak minute): ${over} of ${OF}` +
    (over ? ` — busiest ${Math.max(...day.map((row) => row.peak)).toFixed(1)}/s` : ""),
);
console.log(`shards over the read budget (${READ_BUDGET}/s at the peak minute): ${overReads} of ${OF}`);
console.log(
  `shards over the ${PLANNED_GB} GB planning line (${n(BYTES_PER_USER)} B a user): ${full} of ${OF}; over D1's ${LIMIT_GB} GB: ${overSize} of ${OF}` +
    ` — largest ${Math.max(...day.map((row) => row.gb)).toFixed(2)} GB`,
);
const within = over === 0 && overReads === 0 && overSize === 0;
console.log(
  within
    ? `every database within D1's limits: ${OF} under 10 GB, the write budget and the read budget`
    : "NOT every database within D1's limits (above)",
);
if (args.check && !within) process.exitCode = 1;
