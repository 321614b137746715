import { auditRecordFromStream } from "../audit/stream";
import type { Config } from "../config";
import type { Db } from "../db/client";
import { deadLetters } from "../db/schema";
import type { EventConsumer } from "../events/consume";
import type { StreamEvent } from "../events/types";
import { OutboundUrlRefused, postOutbound } from "../lib/outbound-fetch";
import { outboundPolicy } from "../lib/outbound-url";
import { exportRequestOf } from "./otlp";
import type { OtlpExport } from "./settings";

/** A collector's answer, or none, in time: a slow collector holds a batch this long at most, then it is retried. */
const TIMEOUT_MS = 10_000;
/** `service.name` of every record's resource. */
const SERVICE_NAME = "edge-auth";

/**
 * Answers a collector gives that retrying cannot change (OTLP/HTTP "Failures": 400 and the like are not retried):
 * the request, its credentials or its URL are wrong until the operator fixes them. 408 and 429 are a busy collector.
 */
const isPermanent = (status: number) => status >= 400 && status < 500 && status !== 408 && status !== 429;

/** What happened to an event's batch: shipped, kept as a dead letter, or failed for now (retried by the queue). */
type Fate = "shipped" | "dead" | Error;

/**
 * The audit's OTLP export, as a consumer of the event stream: it takes only `audit.recorded` events, ships each
 * batch's events in one OTLP/HTTP request (`prepare`), then answers per event (`consume`) from what the collector
 * said:
 * - 2xx: shipped, acknowledged;
 * - unreachable, no answer in time, 408, 429, 5xx: the event fails, and the queue retries it with the stream's
 *   backoff (AUTH_EVENTS_RETRY_DELAY_SECONDS doubled, about 59 h in all) before its dead-letter queue keeps it: a
 *   collector down for a day loses nothing;
 * - any other 4xx (a wrong token, a wrong path, a refused body) or a URL the policy refuses: retrying would only repeat
 *   it, so the batch becomes dead letters at once, which the console shows on the audit page with the way to send
 *   them again once the collector is fixed. Never a loop: every path ends acknowledged or retried with backoff.
 */
export function otlpShipper(deps: {
  config: Config;
  db: Db;
  outbound: typeof fetch;
  now: () => number;
  target: OtlpExport;
}): EventConsumer {
  const fates = new Map<string, Fate>();
  const policy = outboundPolicy(deps.config);

  async function keepAsDeadLetters(events: StreamEvent[], why: string): Promise<Fate> {
    try {
      const at = deps.now();
      // Keyed by the event's id: a batch refused twice (a retry already under way) is kept once.
      for (const event of events) {
        await deps.db
          .insert(deadLetters)
          .values({ id: `audit-${event.id}`, queue: "events", body: event, attempts: 1, at })
          .onConflictDoNothing();
      }
      console.error(
        JSON.stringify({ level: "error", what: "audit export refused", events: events.length, why }),
      );
      return "dead";
    } catch (error) {
      return new Error(`audit export refused (${why}) and its dead letters not kept: ${String(error)}`);
    }
  }

  async function ship(events: StreamEvent[]): Promise<Fate> {
    const records = events.flatMap((event) => auditRecordFromStream(event.data) ?? []);
    const body = JSON.stringify(exportRequestOf(records, deps.now(), SERVICE_NAME));
    let answer: { status: number; text: string };
    try {
      answer = await postOutbound(deps.outbound, deps.target.url, policy, {
        headers: { ...deps.target.headers, "content-type": "application/json" },
        body,
        timeoutMs: TIMEOUT_MS,
        keepBytes: 2_000,
      });
    } catch (error) {
      if (error instanceof OutboundUrlRefused) return keepAsDeadLetters(events, error.message);
      return new Error(
        `audit export: the collector did not answer (${(error as { reason?: string }).reason ?? error})`,
      );
    }
    if (answer.status >= 200 && answer.status < 300) {
      // OTLP's partial success: the collector took the request but dropped some records, and says so.
      if (answer.text.includes("rejectedLogRecords")) {
        console.warn(
          JSON.stringify({ level: "warn", what: "audit export partly rejected", answer: answer.text }),
        );
      }
      return "shipped";
    }
    const why = `the collector answered ${answer.status}: ${answer.text.slice(0, 300)}`;
    if (isPermanent(answer.status)) return keepAsDeadLetters(events, why);
    return new Error(`audit export: ${why}`);
  }

  return {
    name: "audit-export",
    takes: ["audit.recorded"],
    async prepare(events) {
      if (events.length === 0) return;
      const fate = await ship(events);
      for (const event of events) fates.set(event.id, fate);
    },
    async consume(event) {
      const fate = fates.get(event.id);
      if (fate instanceof Error) throw fate;
      // Not prepared (a batch the stream handed over otherwise): shipped alone.
      if (fate === undefined) {
        const alone = await ship([event]);
        if (alone instanceof Error) throw alone;
      }
    },
  };
}
