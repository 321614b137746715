// A path's round trips in WAVES (issue 48, "Round trips"): the recording bindings of `npm run bench:latency`
// (bench/round-trips.ts) around the Worker under test, no delay. A wave is a group of storage calls that overlap in
// time (they ran side by side); the waves before the answer are what a user waits for. Rate Limiting calls are left
// out, as the bench does (the platform counts them in the location that serves the request).
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import {
  type Call,
  type DelayName,
  isSlotMapRead,
  KINDS,
  recordInto,
  tick,
  waves,
  wrapEnv,
} from "../../bench/round-trips";
import worker from "../../src/index";
import { PREFIX, type RequestOptions, SERVER } from "../helpers";

export interface WaveCount {
  /** Waves before the answer, over every binding but the rate limiters. */
  sequential: number;
  /**
   * The longest run of calls before the answer each started after the one before it ended (rate limiters and the
   * isolate's slot-map read aside): the trips in line. Without delays a call awaited late (a read started early and
   * taken after the hash) can overlap two waves and join them in `sequential`; this counts them apart.
   */
  inLine: number;
  /** Per kind, "waves/calls" (as the bench prints them). */
  perKind: string[];
  /** The calls before the answer, in order, `[start-end] kind label`: said when a count is not the one expected. */
  trace: string;
}

let calls: Call[] = [];
type Hold = number | (() => Promise<unknown>);
let delayOf: (name: DelayName) => number | Promise<unknown> = () => 0;
recordInto({ record: (call) => calls.push(call), delay: (name) => delayOf(name) });

/**
 * Holds each call of the kinds named before it is made, until called again with `{}`: for that many milliseconds (the
 * bench's profiles do the same), or until the promise a function gives settles, for a test that needs a call still in
 * flight while the Worker does something else, however long that takes on the machine running it.
 */
export function delayCalls(delays: Partial<Record<DelayName, Hold>>): void {
  delayOf = (name) => {
    const hold = delays[name] ?? 0;
    return typeof hold === "number" ? hold : hold();
  };
}

/**
 * What an isolate keeps and reads again on its own clock, whichever request comes first after: the slot map (once a
 * second) and the signing keys (every ten seconds, `keySetTtlMs`). On a busy machine a measured request may be that
 * one: counted nowhere (a warm isolate's request reads neither: pinned in test/round-trips.test.ts).
 */
const keptByTheIsolate = (call: Call) => isSlotMapRead(call) || /\bfrom signing_keys\b/i.test(call.label);

function countOf(before: Call[]): WaveCount {
  const perKind = KINDS.flatMap((kind) => {
    const of = before.filter((call) => call.kind === kind && !keptByTheIsolate(call));
    return of.length ? [`${kind} ${waves(of)}/${of.length}`] : [];
  });
  const trace = [...before]
    .sort((a, b) => a.start - b.start)
    .map((call) => `[${call.start}-${call.end}] ${call.kind} ${call.label}`)
    .join("\n");
  const path = before.filter((call) => call.kind !== "limiter" && !keptByTheIsolate(call));
  return { sequential: waves(path), inLine: inLine(path), perKind, trace };
}

function inLine(calls: Call[]): number {
  const sorted = calls.filter((call) => !keptByTheIsolate(call)).sort((a, b) => a.start - b.start);
  // Each call's place in its line: one more than the deepest call that ended before it started.
  const depth = sorted.map(() => 0);
  sorted.forEach((call, i) => {
    depth[i] =
      1 + Math.max(0, ...sorted.slice(0, i).flatMap((o, j) => (o.end < call.start ? [depth[j]!] : [])));
  });
  return Math.max(0, ...depth);
}

/** The Worker with recording bindings (`overrides` as `service()` takes them); each request answers with its waves. */
export function waveService(overrides: Record<string, unknown> = {}) {
  const testEnv = wrapEnv({ ...env, ...overrides });
  async function request(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<{ response: Response; waves: WaveCount }> {
    const headers = new Headers(options.headers);
    if (options.json !== undefined) headers.set("content-type", "application/json");
    if (options.token) headers.set("authorization", `Bearer ${options.token}`);
    const body = options.json !== undefined ? JSON.stringify(options.json) : options.body;
    const url = path.startsWith("http") ? path : `${SERVER}${PREFIX}${path}`;
    const ctx = createExecutionContext();
    calls = [];
    const response = await worker.fetch!(new Request(url, { method, headers, body }), testEnv, ctx);
    const answeredAt = tick();
    const before = calls.filter((call) => call.end < answeredAt);
    await waitOnExecutionContext(ctx);
    return { response, waves: countOf(before) };
  }
  return {
    env: testEnv,
    request,
    post: (path: string, json?: unknown, token?: string) => request("POST", path, { json, token }),
    get: (path: string, token?: string) => request("GET", path, { token }),
  };
}
