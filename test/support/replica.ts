import { env } from "cloudflare:test";

/**
 * A D1 binding with a read replica that lags, for the consistency tests of docs/decisions.md ("Reads near the
 * user"). Local D1 has one copy, so a session reads what the primary has; here the replica is a snapshot of chosen
 * users' rows and sessions (shadow tables in the same database), taken by `freeze()` at the primary's bookmark then.
 * As D1 does, a session that may read a replica (`first-unconstrained`, or a bookmark the snapshot has reached)
 * reads the snapshot; a session whose bookmark is newer than the snapshot is served as the primary would serve it (D1
 * waits for a replica that has it, or asks the primary); the binding itself and `first-primary` are the primary.
 * Every statement is counted by where it ran.
 */

/** The tables the snapshot holds; other tables read as the primary has them. */
const REPLICATED = ["users", "sessions"] as const;
const shadow = (table: string) => `replica_${table}`;

export interface Routing {
  primary: number;
  replica: number;
}

export interface LaggingReplica {
  binding: D1Database;
  /** Statements run, by where they ran; reset them freely. */
  counts: Routing;
  /** The replica now has these users' rows and sessions as the primary has them, and nothing newer of theirs. */
  freeze(...userIds: string[]): Promise<void>;
}

async function primaryBookmark(primary: D1Database): Promise<string> {
  const session = primary.withSession("first-primary");
  await session.prepare("SELECT 1").run();
  return session.getBookmark()!;
}

const shadowsReady = new WeakMap<D1Database, Promise<void>>();

function createShadows(primary: D1Database): Promise<void> {
  let ready = shadowsReady.get(primary);
  if (!ready) {
    ready = (async () => {
      for (const table of REPLICATED) {
        await primary
          .prepare(`CREATE TABLE IF NOT EXISTS ${shadow(table)} AS SELECT * FROM ${table} WHERE 0`)
          .run();
      }
    })();
    shadowsReady.set(primary, ready);
  }
  return ready;
}

/** The snapshot's SQL: each replicated table, quoted as Drizzle writes it or bare, read from its shadow. */
function onSnapshot(sql: string): string {
  let rewritten = sql;
  for (const table of REPLICATED) {
    rewritten = rewritten
      .replaceAll(`"${table}"`, `"${shadow(table)}"`)
      .replace(new RegExp(`\\b(from|join)\\s+${table}\\b`, "gi"), `$1 ${shadow(table)}`);
  }
  return rewritten;
}

/**
 * `primary`: the D1 binding whose replica lags, `DB` unless another is given (with several shards, a user's rows are
 * in the user's shard: test/support/shards.ts).
 */
export async function laggingReplica(primary: D1Database = env.DB): Promise<LaggingReplica> {
  await createShadows(primary);
  const counts: Routing = { primary: 0, replica: 0 };
  let snapshotAt = await primaryBookmark(primary);

  const counted = (where: keyof Routing, statement: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(statement, {
      get(target, property) {
        if (property === "bind") return (...values: unknown[]) => counted(where, target.bind(...values));
        const value = Reflect.get(target, property);
        if (typeof value !== "function") return value;
        if (["first", "run", "all", "raw"].includes(String(property))) {
          return (...args: unknown[]) => {
            counts[where]++;
            return value.apply(target, args);
          };
        }
        return value.bind(target);
      },
    });

  function session(constraint: string | undefined): D1DatabaseSession {
    const onReplica =
      constraint === undefined ||
      constraint === "first-unconstrained" ||
      (constraint !== "first-primary" && constraint <= snapshotAt);
    const real = primary.withSession(onReplica ? "first-unconstrained" : constraint);
    return {
      prepare: (sql: string) =>
        onReplica ? counted("replica", real.prepare(onSnapshot(sql))) : counted("primary", real.prepare(sql)),
      batch: (statements: D1PreparedStatement[]) => {
        counts.primary += statements.length;
        return real.batch(statements);
      },
      getBookmark: () => (onReplica ? snapshotAt : real.getBookmark()),
    } as D1DatabaseSession;
  }

  const binding = new Proxy(primary, {
    get(target, property) {
      if (property === "prepare") return (sql: string) => counted("primary", target.prepare(sql));
      if (property === "withSession") return session;
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });

  return {
    binding,
    counts,
    async freeze(...userIds) {
      for (const id of userIds) {
        await primary.batch([
          primary.prepare(`DELETE FROM ${shadow("users")} WHERE id = ?`).bind(id),
          primary.prepare(`DELETE FROM ${shadow("sessions")} WHERE user_id = ?`).bind(id),
          primary.prepare(`INSERT INTO ${shadow("users")} SELECT * FROM users WHERE id = ?`).bind(id),
          primary
            .prepare(`INSERT INTO ${shadow("sessions")} SELECT * FROM sessions WHERE user_id = ?`)
            .bind(id),
        ]);
      }
      snapshotAt = await primaryBookmark(primary);
    },
  };
}
