import { asc, inArray, isNull, lt, or } from "drizzle-orm";
import type { Db } from "../db/client";
import { type EventOutboxRow, eventOutbox } from "../db/schema";
import { eachShard, type Shards } from "../db/shards";
import { isStreamEventType, type StreamEvent } from "./types";

/** Rows one drain takes at a time (also the most a queue's sendBatch accepts). */
const PAGE = 100;
/** A queue batch may hold 256 KB; snapshots are small, but metadata can be large: batches stay under this. */
const MAX_BATCH_BYTES = 200_000;
/** How long a drain owns the rows it took: if it dies before handing them over, another takes them after this. */
export const CLAIM_MS = 60_000;
/** Pages per drain: a request's drain hands over its own few events; the minute's cron catches up on the rest. */
const MAX_PAGES = 20;

export function toStreamEvent(row: EventOutboxRow): StreamEvent {
  if (!isStreamEventType(row.type)) throw new Error(`event_outbox holds an unknown event type: ${row.type}`);
  return {
    id: row.id,
    type: row.type,
    timestamp: new Date(row.at).toISOString(),
    subject: row.subject,
    sequence: row.sequence,
    data: row.data,
  };
}

/** Splits events into sendBatch calls under the queue's size limit. */
function batches(events: StreamEvent[]): StreamEvent[][] {
  const out: StreamEvent[][] = [];
  let current: StreamEvent[] = [];
  let bytes = 0;
  for (const event of events) {
    const size = JSON.stringify(event).length + 100;
    if (current.length > 0 && bytes + size > MAX_BATCH_BYTES) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(event);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/**
 * Hands the outbox's events to the EVENTS queue, oldest first, and removes what the queue accepted. Rows are claimed
 * by one conditional UPDATE … RETURNING, so drains running at once (a crowd of requests, the cron) take disjoint rows.
 * A send that fails leaves its rows claimed until CLAIM_MS passes, then any drain sends them again: delivery is at
 * least once, and consumers deduplicate on the event id. The change itself was committed with its event long before
 * this runs; a queue that is down delays events, it never loses one or fails the request that wrote it.
 */
export async function drainOutbox(deps: { db: Db; queue: Queue; now: () => number }): Promise<number> {
  // Most requests wrote no event: one read says so, without the write a claim would be.
  const any = await deps.db.select({ position: eventOutbox.position }).from(eventOutbox).limit(1).get();
  if (!any) return 0;
  let handed = 0;
  for (let page = 0; page < MAX_PAGES; page++) {
    const now = deps.now();
    const free = or(isNull(eventOutbox.claimedUntil), lt(eventOutbox.claimedUntil, now));
    const waiting = deps.db
      .select({ position: eventOutbox.position })
      .from(eventOutbox)
      .where(free)
      .orderBy(asc(eventOutbox.position))
      .limit(PAGE);
    const claimed = await deps.db
      .update(eventOutbox)
      .set({ claimedUntil: now + CLAIM_MS })
      .where(inArray(eventOutbox.position, waiting))
      .returning()
      .all();
    if (claimed.length === 0) break;
    claimed.sort((a, b) => a.position - b.position);
    for (const batch of batches(claimed.map(toStreamEvent))) {
      await deps.queue.sendBatch(batch.map((body) => ({ body, contentType: "json" as const })));
    }
    await deps.db.delete(eventOutbox).where(
      inArray(
        eventOutbox.position,
        claimed.map((row) => row.position),
      ),
    );
    handed += claimed.length;
    if (claimed.length < PAGE) break;
  }
  return handed;
}

/**
 * The outbox of every shard (src/db/shards.ts: each shard's triggers write their own), as the minute's cron drains
 * them. A shard that fails (D1 unavailable for now) holds back its own events only, until the next minute.
 */
export async function drainShards(shards: Shards, queue: Queue, now: () => number): Promise<number> {
  const handed = await eachShard(shards, (db) =>
    drainOutbox({ db, queue, now }).catch((error) => {
      console.error(JSON.stringify({ level: "error", what: "outbox drain", detail: String(error) }));
      return 0;
    }),
  );
  return handed.reduce((sum, n) => sum + n, 0);
}

/**
 * Whether a request may have written a change: the drain after it is worth its query. `grantType`: the request's
 * `grant_type` query parameter, where a face's token endpoint takes it there (GoTrue's `/token?grant_type=…`).
 */
export function mayHaveWritten(method: string, path: string, grantType?: string): boolean {
  // A refresh writes no event unless it catches a replay (the minute's cron hands that one over): the hottest
  // endpoint pays no query for the stream. A token endpoint's other grants sign in (a session written: its event).
  if (/\/token$/.test(path)) return grantType !== undefined && grantType !== "refresh_token";
  if (method !== "GET" && method !== "HEAD" && method !== "OPTIONS") return true;
  // Links followed by a browser change state with a GET: email verification, magic links, providers' and enterprise
  // callbacks, the SAML ACS's GET (where its sign-in finishes: a JIT user, a membership, a session), and an
  // RP-initiated logout whose ID token hint names this browser's session (it ends the session at once).
  return /\/(verify|callback|acs)(\/|$)|\/signin\/provider\/|\/oauth2\/logout$/.test(path);
}
