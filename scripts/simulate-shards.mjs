// Replays one day of sign-ins, refreshes, session checks and sign-ups over N D1 shards and a directory database, and
// prints the load each database gets (docs/scaling.md, "Past one D1 database"). Users go to shards the way the sharding
// code will send them: the first 12 bits of SHA-256(user id) name one of 4,096 slots, and slots are split into N
// contiguous ranges, one per shard. Lookups that arrive by email, phone, provider identity or PAT read the directory
// first; a sign-up claims its email there, then creates the user in its shard, then confirms the claim.
//
//   node scripts/simulate-shards.mjs --users 10000000 --shards 8 [--seed 1] [--budget 100] [--per-shard-hours]
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
  directoryClaim: 1, // INSERT … ON CONFLICT DO NOTHING (pending)
  directoryConfirm: 1, // UPDATE … SET state = 'live'
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

const writes = new Float64Array(SHARDS * MINUTES);
const reads = new Float64Array(SHARDS * MINUTES);
const dirWrites = new Float64Array(MINUTES);
const dirReads = new Float64Array(MINUTES);
const usersPerShard = new Float64Array(SHARDS);
const at = (shard, minute) => shard * MINUTES + (minute % MINUTES);
const totals = { signIns: 0, refreshes: 0, checks: 0, signUps: 0, verifications: 0 };

for (let i = 0; i < USERS; i++) {
  const shard = shardOfSlot(slotOf(newUserId()));
  usersPerShard[shard] += 1;
  if (random() >= ACTIVE) continue;
  // A sign-in: one directory lookup (email, phone, provider or PAT), then the user's shard.
  const start = drawMinute();
  totals.signIns += 1;
  dirReads[start] += READS.directoryLookup;
  writes[at(shard, start)] += COMMITS.signIn;
  reads[at(shard, start)] += READS.signIn;
  const open = hoursOpen();
  // Refreshes every 15 minutes while the app is open, each 1 replica read; the hourly touch is a write.
  for (let k = 1; k <= open * REFRESHES_PER_HOUR; k++) {
    reads[at(shard, start + 15 * k)] += READS.refresh;
    if (k % REFRESHES_PER_HOUR === 0) writes[at(shard, start + 15 * k)] += COMMITS.touch;
  }
  totals.refreshes += open * REFRESHES_PER_HOUR;
  for (let k = 0; k < CHECKS_PER_ACTIVE_USER; k++) {
    reads[at(shard, start + Math.floor((k * open * 60) / CHECKS_PER_ACTIVE_USER))] += READS.check;
  }
  totals.checks += CHECKS_PER_ACTIVE_USER;
}
for (let i = 0; i < SIGNUPS; i++) {
  const shard = shardOfSlot(slotOf(newUserId()));
  usersPerShard[shard] += 1;
  const minute = drawMinute();
  totals.signUps += 1;
  // Claim the email in the directory, create the user in its shard, confirm the claim.
  dirWrites[minute] += COMMITS.directoryClaim + COMMITS.directoryConfirm;
  writes[at(shard, minute)] += COMMITS.signUp;
  reads[at(shard, minute)] += READS.signUp;
  if (random() < VERIFY_SHARE) {
    totals.verifications += 1;
    writes[at(shard, minute + 10)] += COMMITS.verify;
    reads[at(shard, minute + 10)] += READS.verify;
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
const shardHours = Array.from({ length: SHARDS }, (_, s) => ({
  writes: hourStats(writes, s * MINUTES),
  reads: hourStats(reads, s * MINUTES),
}));
const dirHours = { writes: hourStats(dirWrites, 0), reads: hourStats(dirReads, 0) };

console.log(
  `users ${USERS.toLocaleString("en-US")} + ${SIGNUPS.toLocaleString("en-US")} sign-ups · shards ${SHARDS} (${SLOTS} slots) · seed ${args.seed} · ` +
    `active ${ACTIVE} · busiest hour ${PEAK_RATIO}× the mean · write budget ${BUDGET} commits/s per database`,
);
console.log(
  `day: ${totals.signIns.toLocaleString("en-US")} sign-ins, ${totals.refreshes.toLocaleString("en-US")} refreshes, ` +
    `${totals.checks.toLocaleString("en-US")} session checks, ${totals.signUps.toLocaleString("en-US")} sign-ups ` +
    `(${totals.verifications.toLocaleString("en-US")} verified)\n`,
);
console.log("per hour (rates per second; 'peak' is the hour's busiest minute)");
console.log(
  "hour  shard writes: mean of shards  busiest shard mean  busiest shard peak   shard reads: mean  busiest peak   directory writes mean/peak  reads mean/peak",
);
for (let h = 0; h < 24; h++) {
  const w = shardHours.map((s) => s.writes[h]);
  const r = shardHours.map((s) => s.reads[h]);
  const mean = (xs) => xs.reduce((x, y) => x + y, 0) / xs.length;
  console.log(
    `${String(h).padStart(2, "0")}:00 ${f(mean(w.map((x) => x.mean)))}                 ${f(Math.max(...w.map((x) => x.mean)))}          ${f(Math.max(...w.map((x) => x.peak)))}          ` +
      `${f(mean(r.map((x) => x.mean)))}    ${f(Math.max(...r.map((x) => x.peak)))}        ` +
      `${f(dirHours.writes[h].mean, 2)} /${f(dirHours.writes[h].peak, 2)}   ${f(dirHours.reads[h].mean)} /${f(dirHours.reads[h].peak)}`,
  );
}
if (args["per-shard-hours"]) {
  console.log("\nper shard and hour: writes/s mean/peak, reads/s mean");
  for (let s = 0; s < SHARDS; s++) {
    console.log(
      `shard ${s}: ${shardHours[s].writes.map((x, h) => `${h}h ${x.mean.toFixed(1)}/${x.peak.toFixed(1)} ${shardHours[s].reads[h].mean.toFixed(0)}`).join(" · ")}`,
    );
  }
}

console.log("\nper shard, over the day");
console.log(
  "shard      users  storage GB   writes/s mean  writes/s peak (hour)   reads/s mean  reads/s peak  budget",
);
const day = [];
for (let s = 0; s < SHARDS; s++) {
  let sum = 0;
  let peak = 0;
  let peakMinute = 0;
  let readSum = 0;
  let readPeak = 0;
  for (let m = 0; m < MINUTES; m++) {
    const w = writes[s * MINUTES + m];
    sum += w;
    if (w > peak) [peak, peakMinute] = [w, m];
    readSum += reads[s * MINUTES + m];
    readPeak = Math.max(readPeak, reads[s * MINUTES + m]);
  }
  const row = {
    users: usersPerShard[s],
    gb: (usersPerShard[s] * BYTES_PER_USER) / 1e9,
    mean: sum / 86_400,
    peak: perSecond(peak),
    hour: Math.floor(peakMinute / 60),
    readMean: readSum / 86_400,
    readPeak: perSecond(readPeak),
  };
  day.push(row);
  const size = row.gb > 10 ? "OVER 10 GB" : row.gb > PLANNED_GB ? `over ${PLANNED_GB} GB plan` : "";
  const flags = [row.peak > BUDGET ? "OVER write budget" : "ok", size].join(" ");
  console.log(
    `${String(s).padStart(5)} ${row.users.toLocaleString("en-US").padStart(10)} ${f(row.gb, 2)}     ${f(row.mean, 1)}       ${f(row.peak, 1)} (${String(row.hour).padStart(2, "0")}h)     ${f(row.readMean, 1)}     ${f(row.readPeak, 1)}   ${flags}`,
  );
}
let dirSum = 0;
let dirPeak = 0;
let dirReadSum = 0;
let dirReadPeak = 0;
for (let m = 0; m < MINUTES; m++) {
  dirSum += dirWrites[m];
  dirPeak = Math.max(dirPeak, dirWrites[m]);
  dirReadSum += dirReads[m];
  dirReadPeak = Math.max(dirReadPeak, dirReads[m]);
}
console.log(
  `  dir ${"(directory)".padStart(10)} ${f(((USERS + SIGNUPS) * DIRECTORY_BYTES_PER_USER) / 1e9, 2)}     ${f(dirSum / 86_400, 2)}       ${f(perSecond(dirPeak), 2)}            ${f(dirReadSum / 86_400, 1)}     ${f(perSecond(dirReadPeak), 1)}   ${perSecond(dirPeak) > BUDGET ? "OVER write budget" : "ok"}`,
);
const ratio = (key) => {
  const xs = day.map((row) => row[key]);
  return Math.max(...xs) / (xs.reduce((x, y) => x + y, 0) / xs.length);
};
const over = day.filter((row) => row.peak > BUDGET).length;
console.log(
  `\nimbalance (max/mean over shards): users ${ratio("users").toFixed(3)} · writes/day ${ratio("mean").toFixed(3)} · peak-minute writes ${ratio("peak").toFixed(3)}`,
);
console.log(
  `shards over the write budget (${BUDGET}/s at the peak minute): ${over} of ${SHARDS}` +
    (over ? ` — busiest ${Math.max(...day.map((row) => row.peak)).toFixed(1)}/s` : ""),
);
const full = day.filter((row) => row.gb > PLANNED_GB).length;
console.log(
  `shards over the ${PLANNED_GB} GB planning line (${BYTES_PER_USER.toLocaleString("en-US")} B a user): ${full} of ${SHARDS}`,
);
