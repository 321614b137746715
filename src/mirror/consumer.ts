import { eq } from "drizzle-orm";
import type pg from "pg";
import { createDb } from "../db/client";
import { type BucketRow, buckets } from "../db/schema";
import type { EventConsumer } from "../events/consume";
import type { StreamEvent } from "../events/types";
import { applyEvent } from "./apply";
import { MirrorUnreachable, openMirror } from "./postgres";
import { ensureSchema, forgetSchema } from "./schema";

/** Events that write nothing to the mirror: no connection is opened for a batch of only these. */
const NOTHING_TO_WRITE = new Set<string>(["session.revoked"]);

/**
 * The mirror's consumer of one batch of the EVENTS queue: one connection, opened at the first event that writes and
 * closed with the batch. A failure fails that event, which the queue retries with backoff (src/events/consume.ts);
 * the Postgres being down therefore delays the mirror and never the service. Once the database proved unreachable,
 * the rest of the batch fails at once rather than waiting for a connection timeout per event.
 */
export function createMirrorConsumer(binding: Hyperdrive, d1: D1Database): EventConsumer {
  const db = createDb(d1);
  let client: pg.Client | null = null;
  let unreachable: MirrorUnreachable | null = null;
  // Per batch, so a bucket is read once per batch however many of its files the batch holds.
  const bucketRows = new Map<string, BucketRow | null>();

  async function connection(): Promise<pg.Client> {
    if (unreachable) throw unreachable;
    if (!client) {
      try {
        client = await openMirror(binding);
      } catch (error) {
        unreachable = error instanceof MirrorUnreachable ? error : new MirrorUnreachable(error);
        throw unreachable;
      }
    }
    return client;
  }

  async function drop(): Promise<void> {
    const open = client;
    client = null;
    await open?.end().catch(() => {});
  }

  async function bucket(id: string): Promise<BucketRow | null> {
    if (!bucketRows.has(id)) {
      bucketRows.set(id, (await db.select().from(buckets).where(eq(buckets.id, id)).get()) ?? null);
    }
    return bucketRows.get(id) ?? null;
  }

  return {
    name: "mirror",
    async consume(event: StreamEvent) {
      if (NOTHING_TO_WRITE.has(event.type)) return;
      try {
        const sql = await connection();
        await ensureSchema(sql);
        await applyEvent(sql, event, { bucket });
      } catch (error) {
        // The tables may be what failed (dropped by hand): check them again next time. The connection may be broken
        // mid-transaction: the next event opens a fresh one.
        forgetSchema();
        await drop();
        throw error;
      }
    },
    close: drop,
  };
}
