import { auditEvents } from "../db/schema";
import type { Shards } from "../db/shards";
import { eventStatements } from "../events/record";
import { randomUuid } from "../lib/crypto";
import { type Actor, actorName } from "./actor";
import type { Audit, AuditEvent, RequestOrigin, SignInAttempt } from "./events";
import { outcomeOf } from "./outcome";
import { recordSignInFailure } from "./sign-in-failures";
import { type AuditRow, auditStreamData } from "./stream";

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
 * The admin secret and the console name no one; an admin action that takes the operator's name as an argument (an
 * impersonation's `actor`, contract operators.md §1) records it in its detail, and the event's actor is named by it.
 */
function operatorNamed(actor: Actor, detail: Record<string, unknown>): string | null {
  return actor.kind === "admin" && typeof detail.actor === "string" ? detail.actor : null;
}

/**
 * The audit recorder of one request: each event becomes a row of `audit_events`, inserted after the answer
 * (`background`, so the flow it describes never waits for it or fails because of it), and one structured JSON log
 * line, which the deployer's log pipeline (Workers Logs, Logpush, `wrangler tail`) sees even if D1 is unavailable.
 * Every row names the request's actor (actor.ts), its outcome and reason code (outcome.ts). With an export set up
 * (`exported`: src/audit-export/), the row's `audit.recorded` event goes into the event outbox in the same batch (one
 * transaction), so the queue ships no event that was not kept and loses none that was (docs/events.md).
 */
export function auditRecorder(deps: {
  shards: Shards;
  encryptionKey: string;
  now: () => number;
  background: (work: Promise<unknown>) => void;
  origin: RequestOrigin;
  /** Who acts until the request's authentication says otherwise. */
  actor: Actor;
  exported: boolean;
}): Audit {
  const origin = { ip: deps.origin.ip, userAgent: deps.origin.userAgent?.slice(0, MAX_USER_AGENT) ?? null };
  let actor: Actor = deps.actor;
  const record = (event: AuditEvent) => {
    const at = deps.now();
    const detail = event.detail ?? {};
    const row: AuditRow = {
      id: eventId(at),
      at,
      type: event.type,
      userId: event.userId ?? null,
      actor: actor.kind,
      actorName: actorName(actor.name ?? operatorNamed(actor, detail)),
      ...outcomeOf(event.type, detail, event),
      ...origin,
      detail,
    };
    console.log(JSON.stringify({ level: "info", what: "audit", ...row }));
    // A user's events live with the user (their shard: the console reads a user's trail from one database).
    const db = row.userId ? deps.shards.ofUser(row.userId) : deps.shards.home;
    const insert = db.insert(auditEvents).values(row);
    deps.background(
      deps.exported
        ? db.batch([insert, ...eventStatements(db, "audit.recorded", "audit", auditStreamData(row))])
        : insert.run(),
    );
  };
  return Object.assign(record, {
    actAs: (next: Actor) => {
      actor = next;
    },
    actor: () => actor,
    signInFailure: (attempt: SignInAttempt) =>
      deps.background(
        recordSignInFailure(
          // Failed sign-ins are counted per client address, whoever's account they tried: in one place, home.
          {
            shards: deps.shards,
            encryptionKey: deps.encryptionKey,
            origin,
            eventId,
            actor,
            exported: deps.exported,
          },
          deps.now(),
          attempt,
        ),
      ),
  });
}
