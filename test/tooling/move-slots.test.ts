// scripts/move-slots.mjs against a loopback stand-in for the admin API's slot steps (the steps themselves run against
// real D1 shards in test/db/slot-moves.test.ts): the order it calls them in, the chunks, the fence's settling, pages.
import { execFile } from "node:child_process";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

type Range = [number, number, string];

/** The slot map and the steps, as the Worker keeps them, minus the rows: enough to hold the script to the protocol. */
function standIn() {
  const map = {
    version: 1,
    ranges: [
      [0, 2047, "DB"],
      [2048, 4095, "DB_1"],
    ] as Range[],
    moving: null as null | { first: number; last: number; from: string; to: string; copied: boolean },
    leftover: null as null | { first: number; last: number; from: string },
  };
  const calls: string[] = [];
  let settled = false;
  const body = async (request: IncomingMessage) => {
    let text = "";
    for await (const chunk of request) text += chunk;
    return text ? JSON.parse(text) : {};
  };
  const server = createServer(async (request, response) => {
    const step = request.url!.split("/slots")[1]!.replace("/", "");
    const json = await body(request);
    calls.push(
      step
        ? `${step}${json.first !== undefined ? ` ${json.first}-${json.last}` : ""}${json.cursor ? " +" : ""}`
        : "status",
    );
    const answer = (status: number, value: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(value));
    };
    if (request.headers["x-hasura-admin-secret"] !== "s3cret") return answer(401, { message: "no" });
    const owner = (slot: number) => map.ranges.find(([a, b]) => a <= slot && slot <= b)![2];
    switch (step) {
      case "":
        return answer(200, map);
      case "fence":
        if (map.moving) return answer(400, { message: "another move" });
        map.moving = {
          first: json.first,
          last: json.last,
          from: owner(json.first),
          to: json.to,
          copied: false,
        };
        settled = false;
        return answer(200, { map, cursor: null });
      case "copy":
        // First call: still settling; then two pages.
        if (!settled) {
          settled = true;
          return answer(200, { map, cursor: null, waitMs: 5 });
        }
        if (!json.cursor)
          return answer(200, { map, cursor: { phase: "copy", table: 3, after: 9 }, rows: { users: 2 } });
        map.moving!.copied = true;
        return answer(200, { map, cursor: null, rows: { sessions: 3 } });
      case "switch": {
        const m = map.moving!;
        if (!m.copied) return answer(400, { message: "not copied" });
        const cut: Range[] = [];
        for (const [a, b, s] of map.ranges) {
          if (b < m.first || a > m.last) cut.push([a, b, s]);
          else {
            if (a < m.first) cut.push([a, m.first - 1, s]);
            cut.push([m.first, m.last, m.to]);
            if (b > m.last) cut.push([m.last + 1, b, s]);
          }
        }
        map.ranges = cut.sort((x, y) => x[0] - y[0]);
        map.leftover = { first: m.first, last: m.last, from: m.from };
        map.moving = null;
        return answer(200, { map, cursor: null });
      }
      case "purge":
        map.leftover = null;
        return answer(200, { map, cursor: null, rows: { users: 2 } });
      default:
        return answer(404, {});
    }
  });
  return { server, calls, map };
}

describe("scripts/move-slots.mjs", () => {
  it("moves a range a chunk at a time: fence, copy once settled and page by page, switch, purge", async () => {
    const { server, calls, map } = standIn();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    try {
      const { stdout } = await run(
        process.execPath,
        [
          "scripts/move-slots.mjs",
          "--api",
          api,
          "--first",
          "2040",
          "--last",
          "2055",
          "--to",
          "DB_2",
          "--chunk",
          "8",
        ],
        { env: { ...process.env, AUTH_ADMIN_SECRET: "s3cret" } },
      );
      // Two chunks; the second spans two shards, each moved on its own.
      const steps = calls.filter((c) => c !== "status");
      expect(steps).toEqual([
        ...["fence 2040-2047", "copy", "copy", "copy +", "switch", "purge"],
        ...["fence 2048-2055", "copy", "copy", "copy +", "switch", "purge"],
      ]);
      expect(map.ranges).toEqual([
        [0, 2039, "DB"],
        [2040, 2047, "DB_2"],
        [2048, 2055, "DB_2"],
        [2056, 4095, "DB_1"],
      ]);
      expect(stdout).toMatch(/slots 2040-2047: DB → DB_2 .*copied users 2, sessions 3/);
      expect(stdout).toMatch(/slots 2048-2055: DB_1 → DB_2/);
    } finally {
      server.close();
    }
  }, 60_000);
});

/** The directory's re-key steps (src/admin/rekey-routes.ts), as the Worker keeps them, minus the keys. */
function rekeyStandIn() {
  const state = {
    map: {
      version: 1,
      ranges: [
        [0, 2047, "DB"],
        [2048, 4095, "DB_1"],
      ] as Range[],
      moving: null as null | {
        first: number;
        last: number;
        from: string;
        to: string;
        copied: boolean;
        rekey: true;
      },
      leftover: null,
    },
    homeFrom: 0,
  };
  const calls: string[] = [];
  const server = createServer(async (request, response) => {
    let text = "";
    for await (const chunk of request) text += chunk;
    const json = text ? JSON.parse(text) : {};
    const answer = (status: number, value: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(value));
    };
    // The script reads the slot map first, whatever it does.
    if (request.url!.endsWith("/slots")) return answer(200, state.map);
    const step = request.url!.split("/directory")[1]!.replace("/", "");
    calls.push(
      step ? `${step}${json.last !== undefined ? ` ${json.last}` : ""}${json.cursor ? " +" : ""}` : "status",
    );
    const { map } = state;
    const owner = (slot: number) => map.ranges.find(([a, b]) => a <= slot && slot <= b)![2];
    switch (step) {
      case "":
        return answer(200, state);
      case "fence":
        if (owner(state.homeFrom) === "DB") state.homeFrom = json.last + 1;
        else {
          const shard = owner(state.homeFrom);
          map.moving = {
            first: state.homeFrom,
            last: json.last,
            from: shard,
            to: shard,
            copied: false,
            rekey: true,
          };
        }
        return answer(200, { ...state, cursor: null });
      case "copy":
        if (!json.cursor) return answer(200, { ...state, cursor: { phase: "purge", after: "07f" }, keys: 2 });
        map.moving!.copied = true;
        return answer(200, { ...state, cursor: null, keys: 2 });
      case "switch":
        if (!map.moving?.copied) return answer(400, { message: "not copied" });
        state.homeFrom = map.moving.last + 1;
        map.moving = null;
        return answer(200, { ...state, cursor: null });
      default:
        return answer(404, {});
    }
  });
  return { server, calls, state };
}

describe("scripts/move-slots.mjs --rekey-directory", () => {
  it("re-keys in slot order, a chunk within one shard at a time: the home shard's passed, the others copied", async () => {
    const { server, calls, state } = rekeyStandIn();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    try {
      const { stdout } = await run(
        process.execPath,
        ["scripts/move-slots.mjs", "--api", api, "--rekey-directory", "--chunk", "1024", "--grace-ms", "0"],
        { env: { ...process.env, AUTH_ADMIN_SECRET: "s3cret" } },
      );
      expect(calls.filter((c) => c !== "status")).toEqual([
        ...["fence 1023", "fence 2047"],
        ...["fence 3071", "copy", "copy +", "switch"],
        ...["fence 4095", "copy", "copy +", "switch"],
      ]);
      expect([state.homeFrom, state.map.moving]).toEqual([4096, null]);
      expect(stdout).toMatch(/slots 0-1023: in the home shard/);
      expect(stdout).toMatch(/slots 2048-3071: 4 directory keys re-keyed to DB_1/);
      expect(stdout).toMatch(/the directory is re-keyed/);
    } finally {
      server.close();
    }
  }, 60_000);
});

/** The directory's build steps (src/admin/build-routes.ts), as the Worker answers them, minus the keys. */
function buildStandIn() {
  const map = { version: 1, ranges: [[0, 4095, "DB"]] as Range[], moving: null, leftover: null };
  const calls: string[] = [];
  let since: number | null = 0;
  let copies = 0;
  const server = createServer(async (request, response) => {
    let text = "";
    for await (const chunk of request) text += chunk;
    const json = text ? JSON.parse(text) : {};
    const answer = (status: number, value: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(value));
    };
    if (request.url!.endsWith("/slots")) return answer(200, map);
    const step = request.url!.split("/directory/build")[1]!.replace("/", "");
    calls.push(
      `${step || "status"}${json.cursor ? ` ${JSON.stringify(json.cursor.retry)}@${json.cursor.source}` : ""}`,
    );
    switch (step) {
      case "begin":
        since = 1;
        return answer(200, { map, since, cursor: null });
      case "copy": {
        copies++;
        const cursor = (source: number, retry: number[][]) => ({ since, source, after: 0, retry });
        // The grace first; a page; the pass's end held by a young claim (a wait that keeps the cursor); done.
        if (copies === 1) return answer(200, { map, since, cursor: json.cursor, waitMs: 5 });
        if (copies === 2) return answer(200, { map, since, cursor: cursor(3, []), keys: 5 });
        if (copies === 3) return answer(200, { map, since, cursor: cursor(7, [[0, 9]]), keys: 2, waitMs: 5 });
        since = null;
        return answer(200, { map, since, cursor: null, keys: 1 });
      }
      default:
        return answer(404, {});
    }
  });
  return { server, calls };
}

describe("scripts/move-slots.mjs --build-directory", () => {
  it("begins, waits out the grace, pages through the pass and waits for a claim in flight with its cursor", async () => {
    const { server, calls } = buildStandIn();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    try {
      const { stdout } = await run(
        process.execPath,
        ["scripts/move-slots.mjs", "--api", api, "--build-directory", "--grace-ms", "0"],
        { env: { ...process.env, AUTH_ADMIN_SECRET: "s3cret" } },
      );
      expect(calls).toEqual(["begin", "copy", "copy", "copy []@3", "copy [[0,9]]@7"]);
      expect(stdout).toMatch(/the directory is built: 8 keys written/);
    } finally {
      server.close();
    }
  }, 60_000);
});
