// Moves slots between shards on a running deployment (docs/scaling.md, "Growing the shard list"), through the admin
// API's steps (src/admin/shard-routes.ts): a range at a time, `--chunk` slots each (fence, copy page by page once
// the fence has settled, switch, purge page by page), so each range is fenced only while its own rows are copied.
//
//   AUTH_ADMIN_SECRET=… node scripts/move-slots.mjs --api https://auth.example.com/v1 --status
//   AUTH_ADMIN_SECRET=… node scripts/move-slots.mjs --api … --pin
//   AUTH_ADMIN_SECRET=… node scripts/move-slots.mjs --api … --first 1024 --last 2047 --to DB_2 [--chunk 16] [--grace-ms 60000]
//   AUTH_ADMIN_SECRET=… node scripts/move-slots.mjs --api … --abort
//   AUTH_ADMIN_SECRET=… node scripts/move-slots.mjs --api … --rekey-directory [--chunk 16] [--grace-ms 60000]
//   AUTH_ADMIN_SECRET=… node scripts/move-slots.mjs --api … --build-directory [--grace-ms 60000]
//
// `--api` is the auth API's base URL (the one `/signin/email-password` is under). Stopped half-way, run it again
// with the same arguments: a range already moved is skipped, a range left fenced is finished (or `--abort` it).
// `--rekey-directory` moves the directory keys of a deployment that ran several shards before the directory was
// sharded by key from the home database to their slots' shards (docs/scaling.md, "A deployment that ran several shards
// before"), `--chunk` slots at a time in increasing order; run again, it goes on where it stopped.
// `--build-directory` writes the directory of a deployment that ran one shard (docs/scaling.md, "Growing from one
// shard"): after `--pin` with one shard and a deploy that lists the new one; run again, it starts over.
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    api: { type: "string" },
    status: { type: "boolean", default: false },
    pin: { type: "boolean", default: false },
    abort: { type: "boolean", default: false },
    "rekey-directory": { type: "boolean", default: false },
    "build-directory": { type: "boolean", default: false },
    first: { type: "string" },
    last: { type: "string" },
    to: { type: "string" },
    chunk: { type: "string", default: "16" },
    /** Longer than any request runs: the fence must reach every isolate and outlive requests begun before it. */
    "grace-ms": { type: "string", default: "60000" },
  },
});
const secret = process.env.AUTH_ADMIN_SECRET;
if (!args.api || !secret) {
  console.error(
    "usage: AUTH_ADMIN_SECRET=… node scripts/move-slots.mjs --api <auth API URL> (--status | --pin | --abort | --rekey-directory | --build-directory | --first N --last M --to BINDING)",
  );
  process.exit(2);
}
const base = `${args.api.replace(/\/$/, "")}/admin/shards/slots`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function call(step, body, at = base) {
  const response = await fetch(step ? `${at}/${step}` : at, {
    method: step ? "POST" : "GET",
    headers: { "x-hasura-admin-secret": secret, "content-type": "application/json" },
    body: step ? JSON.stringify(body ?? {}) : undefined,
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(`${step ?? "status"}: ${response.status} ${answer.message ?? ""}`);
  return answer;
}

/** Calls a paged step until its cursor is null; `copy` also waits out the fence's settling. */
async function pages(step, extra = {}, at = base) {
  const rows = {};
  for (let cursor = null; ; ) {
    const page = await call(step, { ...extra, cursor }, at);
    for (const [table, n] of Object.entries(page.rows ?? {})) rows[table] = (rows[table] ?? 0) + n;
    if (page.keys) rows.directory = (rows.directory ?? 0) + page.keys;
    if (page.waitMs) {
      // The fence or the build's grace settling, or a claim in flight: the same page again, later.
      cursor = page.cursor;
      await sleep(page.waitMs);
      continue;
    }
    if (page.cursor === null) return { map: page.map, rows };
    cursor = page.cursor;
  }
}

const summary = (rows) =>
  Object.entries(rows)
    .filter(([, n]) => n > 0)
    .map(([table, n]) => `${table} ${n}`)
    .join(", ") || "no rows";

const grace = { graceMs: Number(args["grace-ms"]) };
let map = await call(null);
if (args.status) {
  console.log(JSON.stringify(map, null, 2));
} else if (args.pin) {
  map = (await call("pin")).map;
  console.log(
    `pinned: version ${map.version}, ${map.ranges.map(([a, b, s]) => `${a}-${b} ${s}`).join(", ")}`,
  );
} else if (args["rekey-directory"]) {
  const directory = base.replace(/\/slots$/, "/directory");
  const chunk = Number(args.chunk);
  for (let status = await call(null, undefined, directory); status.homeFrom < 4096; ) {
    const began = Date.now();
    const start = status.homeFrom;
    // The chunk ends with the shard's range: a fence holds the slots of one shard.
    const range = status.map.ranges.find(([a, b]) => a <= start && start <= b);
    const end = Math.min(range[1], start + chunk - 1);
    // A fence left by an earlier run is finished first (its copy runs again from the start: it is idempotent).
    const fenced = status.map.moving?.rekey ? status : await call("fence", { last: end }, directory);
    let keys = 0;
    if (fenced.map.moving) {
      keys = (await pages("copy", grace, directory)).rows.directory ?? 0;
      await call("switch", {}, directory);
    }
    status = await call(null, undefined, directory);
    const moving = fenced.map.moving;
    console.log(
      moving
        ? `slots ${moving.first}-${moving.last}: ${keys} directory keys re-keyed to ${moving.to} in ${((Date.now() - began) / 1000).toFixed(1)} s`
        : `slots ${start}-${status.homeFrom - 1}: in the home shard, nothing to move`,
    );
  }
  console.log("the directory is re-keyed: every key is in its slot's shard");
} else if (args["build-directory"]) {
  const build = base.replace(/\/slots$/, "/directory/build");
  const began = Date.now();
  await call("begin", {}, build);
  const { rows } = await pages("copy", grace, build);
  console.log(
    `the directory is built: ${rows.directory ?? 0} keys written in ${((Date.now() - began) / 1000).toFixed(1)} s; slots may move`,
  );
} else if (args.abort) {
  if (map.moving)
    console.log(
      `aborted ${map.moving.first}-${map.moving.last}: ${summary((await pages("abort")).rows)} removed from ${map.moving.to}`,
    );
  else console.log("nothing is moving");
} else {
  const [first, last, chunk] = [Number(args.first), Number(args.last), Number(args.chunk)];
  if (!(Number.isInteger(first) && Number.isInteger(last) && args.to && chunk > 0)) {
    console.error("--first, --last and --to are needed (slots 0-4095, a binding of AUTH_D1_SHARDS)");
    process.exit(2);
  }
  // A move or a purge left half-way by an earlier run is finished first.
  if (map.moving) {
    console.log(`finishing ${map.moving.first}-${map.moving.last} → ${map.moving.to}`);
    await pages("copy", grace);
    await call("switch");
  }
  if ((await call(null)).leftover) await pages("purge");
  for (let start = first; start <= last; start += chunk) {
    const end = Math.min(last, start + chunk - 1);
    const owners = (await call(null)).ranges.filter(([a, b]) => a <= end && b >= start);
    // Each part of the chunk that is not in the target yet, one shard's part at a time.
    for (const [a, b, shard] of owners) {
      if (shard === args.to) continue;
      const [from, to] = [Math.max(a, start), Math.min(b, end)];
      const began = Date.now();
      await call("fence", { first: from, last: to, to: args.to });
      const copied = await pages("copy", grace);
      await call("switch");
      const purged = await pages("purge");
      console.log(
        `slots ${from}-${to}: ${shard} → ${args.to} in ${((Date.now() - began) / 1000).toFixed(1)} s (copied ${summary(copied.rows)}; removed ${summary(purged.rows)} from ${shard})`,
      );
    }
  }
  map = await call(null);
  console.log(`map version ${map.version}: ${map.ranges.map(([a, b, s]) => `${a}-${b} ${s}`).join(", ")}`);
}
