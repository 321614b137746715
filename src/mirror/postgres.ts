import pg from "pg";

/**
 * The little of a Postgres client the mirror uses: a `pg.Client` over Hyperdrive in the Worker, a plain `pg.Client`
 * in the tests that apply events to a database directly.
 */
export interface Sql {
  query<Row extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: Row[]; rowCount: number | null }>;
}

/**
 * A client of the mirror's database through the Hyperdrive binding. Short timeouts: a database that does not answer
 * must fail the batch quickly (its messages are retried later), not hold the queue consumer until the platform ends it.
 */
export async function openMirror(binding: Hyperdrive): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: binding.connectionString,
    connectionTimeoutMillis: 5_000,
    query_timeout: 20_000,
    application_name: "edge-auth-mirror",
  });
  // A connection lost between queries is reported as an "error" event; unheard, it would end the isolate. The query
  // in flight rejects on its own, and the consumer reconnects for the next event.
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => {});
    throw new MirrorUnreachable(error);
  }
  return client;
}

/** The mirror's database could not be reached at all (as opposed to a statement that failed). */
export class MirrorUnreachable extends Error {
  constructor(cause: unknown) {
    super(`the mirror's Postgres cannot be reached: ${(cause as Error)?.message ?? cause}`, { cause });
    this.name = "MirrorUnreachable";
  }
}

/**
 * Runs `work` in one transaction. Hyperdrive pools connections per transaction, so everything that must hold together
 * (a version claimed and the rows it covers) goes inside one; nothing relies on session state between transactions.
 */
export async function inTransaction<T>(sql: Sql, work: () => Promise<T>): Promise<T> {
  await sql.query("BEGIN");
  try {
    const result = await work();
    await sql.query("COMMIT");
    return result;
  } catch (error) {
    await sql.query("ROLLBACK").catch(() => {});
    throw error;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Nhost's ids are `uuid` columns: a value of another shape cannot be written there. */
export const isUuid = (value: unknown): value is string => typeof value === "string" && UUID.test(value);
