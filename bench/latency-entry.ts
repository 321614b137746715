// `npm run bench:latency` only (issue 31 §4): the Worker's entry with every storage binding wrapped, so that each call
// waits as long as a delay profile says its round trip takes in production, and is recorded. Nothing of the service
// changes: this module hands the real default export a wrapped `env` and re-exports the real Durable Object classes
// (whose own storage is local to them, so it is not wrapped). Bundled by bench/latency.mjs with
// `wrangler deploy bench/latency-entry.ts --dry-run`; never deployed.
//
// Control routes (answered here, before the service): `/__latency/profile?name=<profile>` sets the delays (`none`:
// no delay), `/__latency/reset` forgets what was recorded, `/__latency/report` returns it: per route, how often each
// shape of round trips was seen, before the answer and after it (work handed to waitUntil).
import { AsyncLocalStorage } from "node:async_hooks";
import type { Env } from "../src/env";
import worker from "../src/index";

export {
  GuessGuard,
  JtiLedger,
  OneTimeCode,
  RateLimiter,
  RefreshSession,
  SessionFamilies,
  SignInLockout,
  WebauthnChallenge,
} from "../src/index";

/** What a call waits on. Rate Limiting binding calls are counted, never delayed: the platform counts in the location. */
type Kind = "d1-primary" | "d1-replica" | "do" | "kv" | "r2" | "queue" | "limiter";

/** Milliseconds per round trip; bench/latency.mjs states each profile's basis. */
export interface Delays {
  d1Replica: number;
  d1PrimaryRead: number;
  d1PrimaryWrite: number;
  durableObject: number;
  kvRead: number;
  kvWrite: number;
  r2: number;
  queue: number;
}
type DelayName = keyof Delays;

const PROFILES: Record<string, Delays | null> = {
  none: null,
  "same-colo": {
    d1Replica: 1,
    d1PrimaryRead: 1,
    d1PrimaryWrite: 3,
    durableObject: 1,
    kvRead: 1,
    kvWrite: 1,
    r2: 1,
    queue: 1,
  },
  "replica-near-primary-far": {
    d1Replica: 2,
    d1PrimaryRead: 80,
    d1PrimaryWrite: 83,
    durableObject: 40,
    kvRead: 2,
    kvWrite: 80,
    r2: 40,
    queue: 40,
  },
  "all-distant": {
    d1Replica: 80,
    d1PrimaryRead: 80,
    d1PrimaryWrite: 83,
    durableObject: 80,
    kvRead: 80,
    kvWrite: 80,
    r2: 80,
    queue: 80,
  },
};
let delays: Delays | null = null;

interface Call {
  kind: Kind;
  /** The SQL's first words or the method's name: what `/__latency/trace` shows. */
  label: string;
  start: number;
  end: number;
}
interface RequestRecord {
  calls: Call[];
  answeredAt: number;
}

/** Order, not time: workerd's clock does not move during a request's CPU work, so events are numbered. */
let clock = 0;
const tick = () => ++clock;
const requests = new AsyncLocalStorage<RequestRecord>();

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function roundTrip<T>(
  kind: Kind,
  delay: DelayName | null,
  call: () => Promise<T>,
  label = "",
): Promise<T> {
  const entry: Call = { kind, label, start: tick(), end: Number.POSITIVE_INFINITY };
  requests.getStore()?.calls.push(entry);
  try {
    const ms = delays && delay ? delays[delay] : 0;
    if (ms > 0) await sleep(ms);
    return await call();
  } finally {
    entry.end = tick();
  }
}

// ---- D1: the binding is the primary; a session other than `first-primary` may be served by a replica (reads only).

const WRITE = /^\s*(insert|update|delete|replace|create|drop|alter)\b/i;
type Target = "primary" | "session";

function kindOf(target: Target, write: boolean): [Kind, DelayName] {
  if (target === "session" && !write) return ["d1-replica", "d1Replica"];
  return ["d1-primary", write ? "d1PrimaryWrite" : "d1PrimaryRead"];
}

const innerOf = new WeakMap<object, D1PreparedStatement>();
/** Whether a wrapped statement writes (a batch of reads on a session may go to a replica). */
const writes = new WeakMap<object, boolean>();

function wrapStatement(
  inner: D1PreparedStatement,
  target: Target,
  write: boolean,
  sql: string,
): D1PreparedStatement {
  const [kind, delay] = kindOf(target, write);
  const label = sql.replace(/\s+/g, " ").slice(0, 90);
  const wrapped = {
    bind: (...values: unknown[]) => wrapStatement(inner.bind(...values), target, write, sql),
    first: (column?: string) => roundTrip(kind, delay, () => inner.first(column as string), label),
    all: () => roundTrip(kind, delay, () => inner.all(), label),
    run: () => roundTrip(kind, delay, () => inner.run(), label),
    raw: (options?: { columnNames?: boolean }) =>
      roundTrip(kind, delay, () => inner.raw(options as { columnNames: true }), label),
  };
  innerOf.set(wrapped, inner);
  writes.set(wrapped, write);
  // The methods D1's statement has and Drizzle calls; a cast, because the type's overloads cannot be restated here.
  return wrapped as unknown as D1PreparedStatement;
}

function wrapBatch(
  inner: (statements: D1PreparedStatement[]) => Promise<D1Result[]>,
  target: Target,
): <T>(statements: D1PreparedStatement[]) => Promise<D1Result<T>[]> {
  return (statements) => {
    const unwrapped = statements.map((s) => innerOf.get(s) ?? s);
    const write = unwrapped.some((_, i) => writes.get(statements[i] as object) ?? true);
    const [kind, delay] = kindOf(target, write);
    return roundTrip(kind, delay, () => inner(unwrapped), `batch of ${statements.length}`) as never;
  };
}

function prepareOn(prepare: (sql: string) => D1PreparedStatement, target: Target) {
  return (sql: string) => {
    const write = WRITE.test(sql);
    return wrapStatement(prepare(sql), target, write, sql);
  };
}

function wrapD1(d1: D1Database): D1Database {
  const wrapped = {
    prepare: prepareOn((sql) => d1.prepare(sql), "primary"),
    batch: wrapBatch((statements) => d1.batch(statements), "primary"),
    exec: (sql: string) => roundTrip("d1-primary", "d1PrimaryWrite", () => d1.exec(sql)),
    dump: () => d1.dump(),
    withSession: (constraint?: string) => {
      const session = d1.withSession(constraint as D1SessionBookmark);
      const target: Target = constraint === "first-primary" ? "primary" : "session";
      return {
        prepare: prepareOn((sql) => session.prepare(sql), target),
        batch: wrapBatch((statements) => session.batch(statements), target),
        getBookmark: () => session.getBookmark(),
      };
    },
  };
  return wrapped as unknown as D1Database;
}

// ---- Durable Objects, KV, R2, queues, Rate Limiting bindings.

/** `target` with the named methods timed and recorded; everything else passes through to the real object. */
function wrapMethods<T extends object>(target: T, methods: Record<string, [Kind, DelayName | null]>): T {
  return new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property, object);
      if (typeof value !== "function") return value;
      const timing = typeof property === "string" ? methods[property] : undefined;
      if (!timing) return value.bind(object);
      return (...args: unknown[]) =>
        roundTrip(timing[0], timing[1], () => Reflect.apply(value, object, args), String(property));
    },
  });
}

/** A stub's every method is one round trip to its object (`fetch` too); `then` stays absent, so a stub is no thenable. */
function wrapStub<T extends object>(stub: T): T {
  return new Proxy(stub, {
    get(object, property) {
      const value = Reflect.get(object, property, object);
      if (typeof property === "symbol" || property === "then" || typeof value !== "function") return value;
      return (...args: unknown[]) =>
        roundTrip("do", "durableObject", () => Reflect.apply(value, object, args), property);
    },
  });
}

function wrapNamespace(namespace: DurableObjectNamespace): DurableObjectNamespace {
  return new Proxy(namespace, {
    get(object, property) {
      const value = Reflect.get(object, property, object);
      if (typeof value !== "function") return value;
      if (property === "get" || property === "getByName") {
        return (...args: unknown[]) => wrapStub(Reflect.apply(value, object, args) as object);
      }
      return value.bind(object);
    },
  });
}

const has = (value: object, ...names: string[]) => names.every((name) => name in value);

function wrapBinding(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  // Service bindings (and anything with `fetch`) stay as they are: an RPC stub answers `in` for any name.
  if ("fetch" in value) return value;
  if (has(value, "prepare", "batch", "exec")) return wrapD1(value as D1Database);
  if (has(value, "idFromName", "get")) return wrapNamespace(value as DurableObjectNamespace);
  if (has(value, "getWithMetadata", "put", "list")) {
    return wrapMethods(value, {
      get: ["kv", "kvRead"],
      getWithMetadata: ["kv", "kvRead"],
      list: ["kv", "kvRead"],
      put: ["kv", "kvWrite"],
      delete: ["kv", "kvWrite"],
    });
  }
  if (has(value, "head", "createMultipartUpload")) {
    return wrapMethods(value, {
      get: ["r2", "r2"],
      head: ["r2", "r2"],
      list: ["r2", "r2"],
      put: ["r2", "r2"],
      delete: ["r2", "r2"],
      createMultipartUpload: ["r2", "r2"],
    });
  }
  if (has(value, "send", "sendBatch")) {
    return wrapMethods(value, { send: ["queue", "queue"], sendBatch: ["queue", "queue"] });
  }
  if (has(value, "limit")) return wrapMethods(value, { limit: ["limiter", null] });
  return value;
}

/** One wrapped env per real env: the service caches its configuration and database handles by identity. */
const wrappedEnvs = new WeakMap<object, Env>();
function wrapEnv(env: Env): Env {
  let wrapped = wrappedEnvs.get(env);
  if (!wrapped) {
    wrapped = Object.fromEntries(
      Object.entries(env).map(([name, value]) => [name, wrapBinding(value)]),
    ) as unknown as Env;
    wrappedEnvs.set(env, wrapped);
  }
  return wrapped;
}

// ---- What was recorded: sequential round trips per kind (calls overlapping in time count once, per wave).

const KINDS: Kind[] = ["d1-primary", "d1-replica", "do", "kv", "r2", "queue", "limiter"];

/** Waves of `calls`: groups of calls that overlap in time. */
function waves(calls: Call[]): number {
  const sorted = [...calls].sort((a, b) => a.start - b.start);
  let count = 0;
  let end = Number.NEGATIVE_INFINITY;
  for (const call of sorted) {
    if (call.start > end) count++;
    end = Math.max(end, call.end);
  }
  return count;
}

/** A shape: `sequential` over every kind but the limiters, then per kind "waves/calls". */
function shapeOf(calls: Call[]): string {
  const perKind = KINDS.map((kind) => {
    const of = calls.filter((call) => call.kind === kind);
    return of.length === 0 ? null : `${kind} ${waves(of)}/${of.length}`;
  }).filter(Boolean);
  const sequential = waves(calls.filter((call) => call.kind !== "limiter"));
  return JSON.stringify({ sequential, perKind });
}

interface RouteStats {
  requests: number;
  before: Record<string, number>;
  after: Record<string, number>;
}
let stats: Record<string, RouteStats> = {};
/** Per route, the calls of the last request recorded, in order, with their waves: `/__latency/trace`. */
let traces: Record<string, string[]> = {};

function record(route: string, side: "before" | "after", calls: Call[]): void {
  stats[route] ??= { requests: 0, before: {}, after: {} };
  const of = stats[route];
  if (side === "before") of.requests++;
  const shape = shapeOf(calls);
  of[side][shape] = (of[side][shape] ?? 0) + 1;
  const lines = [...calls]
    .sort((a, b) => a.start - b.start)
    .map((call) => `${side} ${call.kind} [${call.start}-${call.end}] ${call.label}`);
  traces[route] = side === "before" ? lines : [...(traces[route] ?? []), ...lines];
}

function control(url: URL): Response {
  if (url.pathname === "/__latency/profile") {
    const name = url.searchParams.get("name") ?? "none";
    if (!(name in PROFILES)) return new Response(`unknown profile ${name}`, { status: 400 });
    delays = PROFILES[name] ?? null;
    return Response.json({ profile: name, delays });
  }
  if (url.pathname === "/__latency/trace") return Response.json(traces);
  if (url.pathname === "/__latency/reset") {
    stats = {};
    traces = {};
    return Response.json({ reset: true });
  }
  return Response.json({ profiles: PROFILES, stats });
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname.startsWith("/__latency/")) return control(url);
    const entry: RequestRecord = { calls: [], answeredAt: Number.POSITIVE_INFINITY };
    const handedOver: Promise<unknown>[] = [];
    const context = new Proxy(ctx, {
      get(object, property) {
        if (property === "waitUntil") {
          return (work: Promise<unknown>) => {
            handedOver.push(work);
            object.waitUntil(work);
          };
        }
        const value = Reflect.get(object, property, object);
        return typeof value === "function" ? value.bind(object) : value;
      },
    });
    const response = await requests.run(entry, () =>
      (worker.fetch as NonNullable<typeof worker.fetch>)(request, wrapEnv(env), context),
    );
    entry.answeredAt = tick();
    const route = `${request.method} ${url.pathname}`;
    record(
      route,
      "before",
      entry.calls.filter((call) => call.end < entry.answeredAt),
    );
    ctx.waitUntil(
      (async () => {
        for (let settled = 0; settled < handedOver.length; ) {
          const batch = handedOver.slice(settled);
          await Promise.allSettled(batch);
          settled += batch.length;
        }
        record(
          route,
          "after",
          entry.calls.filter((call) => call.end >= entry.answeredAt),
        );
      })(),
    );
    return response;
  },
  scheduled: worker.scheduled,
  queue: worker.queue,
} satisfies ExportedHandler<Env>;
