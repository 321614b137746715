// Bindings that count what the Worker asks of them: D1 statements by kind, Durable Objects by the objects asked for.
import { env } from "cloudflare:test";

export interface Counts {
  reads: number;
  writes: number;
}

/** A D1 binding (`DB` unless another is given) that counts the statements it runs, by their first keyword. */
export function countingDb(counts: Counts, binding: D1Database = env.DB): D1Database {
  const count = (sql: string) => {
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
