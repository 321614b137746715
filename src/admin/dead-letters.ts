import { count, desc } from "drizzle-orm";
import { z } from "zod";
import { type DeadLetterRow, deadLetters } from "../db/schema";
import type { Deps } from "../http/deps";
import { type Page, pastCursor, toPage } from "../http/paging";

/**
 * The event stream's dead letters (contract move-in §5): messages of the events and webhook-deliveries queues that ran
 * out of retries, kept in D1 by the dead-letter queue's consumer (src/events/dead-letters.ts), listed here for the
 * admin API and the console, newest first.
 */

export const wireDeadLetterSchema = z.object({
  id: z.string().describe("The queue's message id"),
  queue: z
    .enum(["events", "deliveries", "logoutDeliveries", "unknown"])
    .describe("Where it failed: the event stream, a webhook delivery, or a back-channel logout notice"),
  summary: z.string().describe("What it was, in a few words: the event's type and id, or the delivery's id"),
  body: z.unknown().describe("The message as the queue carried it"),
  attempts: z.number().int(),
  at: z.iso.datetime().describe("When it became a dead letter"),
});
export type WireDeadLetter = z.infer<typeof wireDeadLetterSchema>;

function summaryOf(body: unknown): string {
  const fields = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  if (typeof fields.deliveryId === "string") return `webhook delivery ${fields.deliveryId}`;
  if (fields.kind === "backchannel-logout") {
    return `back-channel logout of session ${String(fields.sid)} to client ${String(fields.clientId)}`;
  }
  if (typeof fields.type === "string" && typeof fields.id === "string") {
    return `${fields.type} ${fields.id} (${String(fields.subject)} #${String(fields.sequence)})`;
  }
  return "a message of another shape";
}

function toWireDeadLetter(row: DeadLetterRow): WireDeadLetter {
  const queue =
    row.queue === "events" || row.queue === "deliveries" || row.queue === "logoutDeliveries"
      ? row.queue
      : "unknown";
  return {
    id: row.id,
    queue,
    summary: summaryOf(row.body),
    body: row.body,
    attempts: row.attempts,
    at: new Date(row.at).toISOString(),
  };
}

export async function listDeadLetterPage(
  deps: Pick<Deps, "db">,
  query: { limit: number; cursor?: string },
): Promise<Page<WireDeadLetter>> {
  const rows = await deps.db
    .select()
    .from(deadLetters)
    .where(pastCursor(query.cursor, deadLetters.at, deadLetters.id, "desc"))
    .orderBy(desc(deadLetters.at), desc(deadLetters.id))
    .limit(query.limit + 1)
    .all();
  return toPage(rows, query.limit, (row) => [row.at, row.id], toWireDeadLetter);
}

export async function countDeadLetters(deps: Pick<Deps, "db">): Promise<number> {
  const row = await deps.db.select({ n: count() }).from(deadLetters).get();
  return row?.n ?? 0;
}
