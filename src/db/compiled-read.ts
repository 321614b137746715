import { type Column, Placeholder } from "drizzle-orm";
import { type D1Reader, nearbyReads } from "./replica";

/**
 * A read whose SQL Drizzle builds once, at start-up, and which runs on whichever D1 target a request picks: the
 * primary (the binding) or a session a replica may serve (replica.ts). Drizzle's own prepared statements are bound
 * to the client they were prepared on, and building the query again per request was our largest cost after the JWT
 * signature (docs/performance.md). Values are decoded by each column's own `mapFromDriverValue`, as Drizzle does.
 */
export interface CompiledRead<Params extends Record<string, unknown>, Row> {
  sql: string;
  /** The first row, or undefined. */
  first(target: D1Reader, params: Params): Promise<Row | undefined>;
  /** Every row. */
  all(target: D1Reader, params: Params): Promise<Row[]>;
  /**
   * The statement, bound, for a `D1Database.batch` beside others (one round trip for all); `rowsOf` decodes its
   * result. D1 answers a batch's rows as objects keyed by column name, so the query's columns must be named apart.
   */
  statement(target: D1Reader, params: Params): D1PreparedStatement;
  rowsOf(result: D1Result): Row[];
}

export function compileRead<Params extends Record<string, unknown>, Row>(
  query: { toSQL(): { sql: string; params: unknown[] } },
  /** The selected columns, in the order the query selects them. */
  columns: Record<keyof Row & string, Column>,
): CompiledRead<Params, Row> {
  const { sql, params } = query.toSQL();
  const names = params.map((param) => {
    if (!(param instanceof Placeholder)) throw new Error("a compiled read takes its values as placeholders");
    return param.name as keyof Params;
  });
  const decoders = Object.entries<Column>(columns);
  const decode = (row: unknown[]) => {
    const decoded: Record<string, unknown> = {};
    decoders.forEach(([key, column], index) => {
      const value = row[index];
      decoded[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
    });
    return decoded as Row;
  };
  const statement = (target: D1Reader, values: Params) =>
    target.prepare(sql).bind(...names.map((name) => values[name]));
  return {
    sql,
    async first(target, values) {
      const row = (await statement(target, values).raw())[0];
      return row ? decode(row) : undefined;
    },
    all: async (target, values) => (await statement(target, values).raw()).map(decode),
    statement,
    // The columns come in the order they were selected (their names are apart, so none was lost).
    rowsOf: (result) =>
      (result.results as Record<string, unknown>[]).map((row) => decode(Object.values(row))),
  };
}

/**
 * `read` from a replica at least as fresh as `bookmark` (replica.ts). A row the replica does not have is looked for
 * on the primary, where it may have been written a moment ago (a sign-up, a sign-in): a replica's lag may show an
 * older row, never a missing one. Rows here are only ever created, changed or deleted, never re-created, so "absent
 * on the replica" is the one answer that needs the primary's word.
 */
export async function firstNearby<Params extends Record<string, unknown>, Row>(
  d1: D1Database,
  read: CompiledRead<Params, Row>,
  params: Params,
  bookmark?: string | null,
): Promise<Row | undefined> {
  // A bookmark D1 will not take (one from a client that is no bookmark D1 ever gave) is not the caller's problem:
  // the primary answers.
  const nearby = await read.first(nearbyReads(d1, bookmark), params).catch(() => undefined);
  return nearby ?? read.first(d1, params);
}
