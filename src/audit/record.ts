import { auditEvents } from "../db/schema";
import type { Shards } from "../db/shards";
import { randomUuid } from "../lib/crypto";
import type { Audit, AuditEvent, RequestOrigin, SignInAttempt } from "./events";
import { recordSignInFailure } from "./sign-in-failures";

/** User agents are what the client says: kept, but bounded. */
const MAX_USER_AGENT = 512;

let sequence = 0;

/**
 * Event ids sort in the order events were recorded: the time, then a per-isolate counter, then randomness for
 * uniqueness across isolates. Two events of one request (a sign-up and the admin action that caused it) share a
 * millisecond; the list, newest first by `(at, id)`, keeps them in order.
 */
function eventId(at: number): string {
  sequence = (sequence + 1) % 1_000_000;
  return `${at.toString().padStart(14, "0")}-${sequence.toString().padStart(6, "0")}-${randomUuid().slice(0, 8)}`;
}

/**
 * The audit recorder of one request: each event becomes a row of `audit_events`, inserted after the answer
 * (`background`, so the flow it describes never waits for it or fails because of it), and one structured JSON log
 * line, which the deployer's log pipeline (Workers Logs, Logpush, `wrangler tail`) sees even if D1 is unavailable.
 */
export function auditRecorder(deps: {
  shards: Shards;
  encryptionKey: string;
  now: () => number;
  background: (work: Promise<unknown>) => void;
  origin: RequestOrigin;
}): Audit {
  const origin = { ip: deps.origin.ip, userAgent: deps.origin.userAgent?.slice(0, MAX_USER_AGENT) ?? null };
  const record = (event: AuditEvent) => {
    const at = deps.now();
    const row = {
      id: eventId(at),
      at,
      type: event.type,
      userId: event.userId ?? null,
      ...origin,
      detail: event.detail ?? {},
    };
    console.log(JSON.stringify({ level: "info", what: "audit", ...row }));
    // A user's events live with the user (their shard: the console reads a user's trail from one database).
    const db = row.userId ? deps.shards.ofUser(row.userId) : deps.shards.home;
    deps.background(db.insert(auditEvents).values(row).run());
  };
  return Object.assign(record, {
    signInFailure: (attempt: SignInAttempt) =>
      deps.background(
        recordSignInFailure(
          // Failed sign-ins are counted per client address, whoever's account they tried: in one place, home.
          { shards: deps.shards, encryptionKey: deps.encryptionKey, origin, eventId },
          deps.now(),
          attempt,
        ),
      ),
  });
}
