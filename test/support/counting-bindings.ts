// Bindings that count what the Worker asks of them: D1 statements by kind, Durable Objects by the objects asked for.
import { env } from "cloudflare:test";
import { SLOT_MAP_READ } from "../../src/db/slot-map";

export interface Counts {
  reads: number;
  writes: number;
}

/** A D1 binding (`DB` unless another is given) that counts the statements it runs, by their first keyword. */
export function countingDb(counts: Counts, binding: D1Database = env.DB): D1Database {
  const count = (sql: string) => {
    // The slot map's read is the isolate's, once a second, not the request's (src/db/slot-map.ts).
    if (sql === SLOT_MAP_READ) return;
    if (/^\s*(select|with)\b/i.test(sql)) counts.reads++;
    else counts.writes++;
  };
  const wrap = (statement: D1PreparedStatement, sql: string): D1PreparedStatement =>
    new Proxy(statement, {
      get(target, property) {
        if (property === "bind") return (...values: unknown[]) => wrap(target.bind(...values), sql);
        const value = Reflect.get(target, property);
        if (typeof value !== "function") return value;
        if (["first", "run", "all", "raw"].includes(String(property))) {
          return (...args: unknown[]) => {
            count(sql);
            return value.apply(target, args);
          };
        }
        return value.bind(target);
      },
    });
  return new Proxy(binding, {
    get(target, property) {
      if (property === "prepare") return (sql: string) => wrap(target.prepare(sql), sql);
      // Reads a replica may serve (src/db/replica.ts) are counted the same: D1 is D1, wherever the copy.
      if (property === "withSession") {
        return (constraint?: string) => {
          const session = target.withSession(constraint);
          return {
            prepare: (sql: string) => wrap(session.prepare(sql), sql),
            batch: (statements: D1PreparedStatement[]) => {
              counts.writes += statements.length;
              return session.batch(statements);
            },
            getBookmark: () => session.getBookmark(),
          };
        };
      }
      // A batch is counted as writes, all of it: the hot path is not supposed to run one at all.
      if (property === "batch") {
        return (statements: D1PreparedStatement[]) => {
          counts.writes += statements.length;
          return target.batch(statements);
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * Every shard's binding (`AUTH_D1_SHARDS`: `DB` and the user shards, src/db/shards.ts), all counting into `counts`:
 * spread into a service's overrides, so a statement is counted wherever its user's rows live.
 */
export function countingShards(counts: Counts): Record<string, D1Database> {
  const names = String(env.AUTH_D1_SHARDS ?? "DB").split(",");
  return Object.fromEntries(names.map((name) => [name, countingDb(counts, env[name] as D1Database)]));
}

export /** A Durable Object namespace that counts the objects asked for. */
function countingNamespace<T extends DurableObjectNamespace>(namespace: T, onGet: () => void): T {
  return new Proxy(namespace, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (property === "get") {
        return (...args: unknown[]) => {
          onGet();
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * What the Worker asks of storage, as round trips: each D1 call (a statement's `first`/`run`/`all`/`raw`, or one
 * `batch`, however many statements it holds) and each Durable Object asked for, by binding name. The SQL of each D1
 * call is kept, to say what differs when two paths' counts do.
 */
export interface RoundTrips {
  d1: string[];
  objects: Record<string, number>;
}

/** The service's overrides that count `trips`: every D1 shard and every Durable Object namespace of `env`. */
export function countingRoundTrips(trips: RoundTrips): Record<string, unknown> {
  const names = String(env.AUTH_D1_SHARDS ?? "DB").split(",");
  const sqlOf = new WeakMap<object, string>();
  const wrap = (statement: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const wrapped = new Proxy(statement, {
      get(target, property) {
        if (property === "bind") return (...values: unknown[]) => wrap(target.bind(...values), sql);
        const value = Reflect.get(target, property);
        if (typeof value !== "function") return value;
        if (["first", "run", "all", "raw"].includes(String(property))) {
          return (...args: unknown[]) => {
            // The slot map's read is the isolate's, once a second, not the request's (src/db/slot-map.ts): counted,
            // it lands on whichever request comes first after a second and makes two equal requests differ.
            if (sql !== SLOT_MAP_READ) trips.d1.push(sql);
            return value.apply(target, args);
          };
        }
        return value.bind(target);
      },
    });
    sqlOf.set(wrapped, sql);
    return wrapped;
  };
  const batch = (run: (statements: D1PreparedStatement[]) => Promise<D1Result[]>) => {
    return (statements: D1PreparedStatement[]) => {
      trips.d1.push(statements.map((s) => sqlOf.get(s) ?? "?").join(";\n"));
      return run(statements);
    };
  };
  const d1 = (binding: D1Database): D1Database =>
    new Proxy(binding, {
      get(target, property) {
        if (property === "prepare") return (sql: string) => wrap(target.prepare(sql), sql);
        if (property === "batch") return batch((statements) => target.batch(statements));
        if (property === "withSession") {
          return (constraint?: string) => {
            const session = target.withSession(constraint);
            return {
              prepare: (sql: string) => wrap(session.prepare(sql), sql),
              batch: batch((statements) => session.batch(statements)),
              getBookmark: () => session.getBookmark(),
            };
          };
        }
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  const objects = Object.entries(env).filter(
    ([, value]) => typeof value === "object" && value !== null && "idFromName" in value,
  );
  return {
    ...Object.fromEntries(names.map((name) => [name, d1(env[name as keyof typeof env] as D1Database)])),
    ...Object.fromEntries(
      objects.map(([name, namespace]) => [
        name,
        countingNamespace(namespace as DurableObjectNamespace, () => {
          trips.objects[name] = (trips.objects[name] ?? 0) + 1;
        }),
      ]),
    ),
  };
}
