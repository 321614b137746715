/**
 * A D1 binding for a slot being moved (docs/scaling.md, "Growing the shard list"): statements are prepared and bound
 * as usual (Drizzle builds its queries on it unchanged), and each one, when it runs, first waits for the move to
 * switch the slot, then runs in the shard that holds the slot from then on. A request that reaches a moving slot
 * therefore waits at its first query there instead of failing or being answered twice: what it did before (a
 * Durable Object's rotation, a claim elsewhere) stays done once, and what it reads and writes in the slot happens
 * in the new shard, after the copy. `owner` resolves the slot's binding once its fence is lifted (shards.ts), or
 * rejects with the 503 of `SlotMovingError` when the move outlasts the wait.
 */

interface Pending {
  sql: string;
  params: unknown[];
}

const PENDING = Symbol("pending");

class WaitingStatement {
  readonly [PENDING]: Pending;
  constructor(
    private readonly owner: () => Promise<D1Database | D1DatabaseSession>,
    pending: Pending,
  ) {
    this[PENDING] = pending;
  }
  bind(...params: unknown[]): WaitingStatement {
    return new WaitingStatement(this.owner, { sql: this[PENDING].sql, params });
  }
  private async real(): Promise<D1PreparedStatement> {
    const d1 = await this.owner();
    return d1.prepare(this[PENDING].sql).bind(...this[PENDING].params);
  }
  async run() {
    return (await this.real()).run();
  }
  async all() {
    return (await this.real()).all();
  }
  async raw(options?: { columnNames?: boolean }) {
    const statement = await this.real();
    return options?.columnNames ? statement.raw({ columnNames: true }) : statement.raw();
  }
  async first(column?: string) {
    const statement = await this.real();
    return column === undefined ? statement.first() : statement.first(column);
  }
}

const realOf = (d1: D1Database | D1DatabaseSession, statement: unknown) => {
  const pending = (statement as WaitingStatement)[PENDING];
  return d1.prepare(pending.sql).bind(...pending.params);
};

function waiting(owner: () => Promise<D1Database | D1DatabaseSession>) {
  return {
    prepare: (sql: string) => new WaitingStatement(owner, { sql, params: [] }),
    batch: async (statements: unknown[]) => {
      const d1 = await owner();
      return d1.batch(statements.map((statement) => realOf(d1, statement)));
    },
  };
}

/** The waiting binding of one slot. */
export function waitingD1(owner: () => Promise<D1Database>): D1Database {
  const base = waiting(owner);
  return {
    ...base,
    exec: async (sql: string) => (await owner()).exec(sql),
    dump: async () => (await owner()).dump(),
    withSession: (constraint?: string) => {
      // The session is opened on the new shard once the slot is there; its bookmark is that shard's.
      let session: D1DatabaseSession | undefined;
      const opened = async () => {
        session ??= (await owner()).withSession(constraint as D1SessionConstraint);
        return session;
      };
      return { ...waiting(opened), getBookmark: () => session?.getBookmark() ?? null };
    },
  } as unknown as D1Database;
}
