// The recording bindings of the round-trip model (issue 31 §4, issue 48 "Round trips"): every storage binding of an
// env wrapped so that each call is recorded with its kind (D1 primary or replica, Durable Object, KV, R2, queue,
// Rate Limiting) and its place in time, and waits as long as a delay says. Two users: bench/latency-entry.ts (`npm
// run bench:latency`, with the delay profiles) and the workers tests that pin a path's waves
// (test/support/waves.ts, no delay). Nothing of the service changes: the real bindings answer every call.
import { SLOT_MAP_READ } from "../src/db/slot-map";

/** What a call waits on. Rate Limiting binding calls are counted, never delayed: the platform counts in the location. */
export type Kind = "d1-primary" | "d1-replica" | "do" | "kv" | "r2" | "queue" | "limiter";

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
export type DelayName = keyof Delays;

export interface Call {
  kind: Kind;
  /** The SQL's first words or the method's name: what `/__latency/trace` shows. */
  label: string;
  start: number;
  end: number;
}
/** Order, not time: workerd's clock does not move during a request's CPU work, so events are numbered. */
let clock = 0;
export const tick = () => ++clock;
/** Where calls go, and how long each waits (milliseconds, 0: none; or until a promise settles, for a test). */
export interface Recorder {
  record(call: Call): void;
  delay(name: DelayName): number | Promise<unknown>;
}
let recorder: Recorder = { record: () => {}, delay: () => 0 };

/** Sets where the wrapped bindings record their calls (one recorder per isolate: the bench's Worker, a test file). */
export function recordInto(next: Recorder): void {
  recorder = next;
}

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
  recorder.record(entry);
  try {
    const wait = delay ? recorder.delay(delay) : 0;
    if (typeof wait !== "number") await wait;
    else if (wait > 0) await sleep(wait);
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

export function wrapBinding(value: unknown): unknown {
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
const wrappedEnvs = new WeakMap<object, object>();
export function wrapEnv<E extends object>(env: E): E {
  let wrapped = wrappedEnvs.get(env) as E | undefined;
  if (!wrapped) {
    wrapped = Object.fromEntries(Object.entries(env).map(([name, value]) => [name, wrapBinding(value)])) as E;
    wrappedEnvs.set(env, wrapped);
  }
  return wrapped;
}

// ---- What was recorded: sequential round trips per kind (calls overlapping in time count once, per wave).

export const KINDS: Kind[] = ["d1-primary", "d1-replica", "do", "kv", "r2", "queue", "limiter"];

/** Waves of `calls`: groups of calls that overlap in time. */
/** How the slot map's read is labelled (its SQL, as `wrapStatement` shortens it). */
const SLOT_MAP_LABEL = SLOT_MAP_READ.replace(/\s+/g, " ").slice(0, 90);

/**
 * The slot map's read (several shards only) is the isolate's, once a second, not the path's (src/db/slot-map.ts): a
 * request makes it or not depending on how long ago the isolate's last one was, so it is counted nowhere.
 */
export const isSlotMapRead = (call: Call) => call.label.startsWith(SLOT_MAP_LABEL);

export function waves(calls: Call[]): number {
  const sorted = calls.filter((call) => !isSlotMapRead(call)).sort((a, b) => a.start - b.start);
  let count = 0;
  let end = Number.NEGATIVE_INFINITY;
  for (const call of sorted) {
    if (call.start > end) count++;
    end = Math.max(end, call.end);
  }
  return count;
}

/** A shape: `sequential` over every kind but the limiters, then per kind "waves/calls". */
export function shapeOf(calls: Call[]): string {
  const perKind = KINDS.map((kind) => {
    const of = calls.filter((call) => call.kind === kind && !isSlotMapRead(call));
    return of.length === 0 ? null : `${kind} ${waves(of)}/${of.length}`;
  }).filter(Boolean);
  const sequential = waves(calls.filter((call) => call.kind !== "limiter"));
  return JSON.stringify({ sequential, perKind });
}
