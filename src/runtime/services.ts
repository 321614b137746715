import type { Actor } from "../audit/actor";
import type { RequestOrigin } from "../audit/events";
import { auditRecorder } from "../audit/record";
import type { Config } from "../config";
import { type Shards, shardsOf, trackShards } from "../db/shards";
import type { Env } from "../env";
import type { Deps } from "../http/deps";
import type { Visitor } from "../http/visitor";
import { visitorOf } from "../http/visitor";
import { createMailer } from "../mail/create-mailer";
import { createSmsSender } from "../sms/create-sender";

/** What a request (src/http/context.ts) or a job (a queue's batch, the cron) adds to the services it gets. */
export interface ServiceScope {
  /** Work that may finish after the answer or the job (`ExecutionContext.waitUntil`). */
  background: (work: Promise<unknown>, what?: string) => void;
  /** The shards to use; a request passes its tracked ones (their outboxes are drained after it). Every shard if absent. */
  shards?: Shards;
  /** Where a request came from, for the audit log; a job has none. */
  origin?: RequestOrigin;
  /** What the request showed of its sender; a job shows nothing. */
  visitor?: Visitor;
  /**
   * Who acts until authentication says otherwise (src/audit/actor.ts): a request starts as `user`, a call through the
   * service binding as `worker`; a job (a queue's batch, the cron) is the `system`.
   */
  actor?: Actor;
  /** The request's id, for the log lines of its flows; a job has none ("-"). */
  requestId?: string;
}

const NO_ORIGIN: RequestOrigin = { ip: null, userAgent: null };

/** A job's background work where no `ExecutionContext` is at hand (a test calling a handler): it runs on, logged if it fails. */
export function detached(work: Promise<unknown>, what = "background"): void {
  work.catch((error) => console.error(JSON.stringify({ level: "error", what, detail: String(error) })));
}

/**
 * The one factory of `Deps`, for the fetch handler (per request), the queue handler (per batch) and the cron (per
 * run): the same database, mailer, SMS sender, outbound HTTP and audit recorder whichever entry asks.
 */
export function createServices(config: Config, env: Env, scope: ServiceScope): Deps {
  // A queue batch's or the cron's own view: a slot being moved is reached through queries that wait for its switch
  // (src/db/slot-wait.ts), as a request's are, never written in the shard it is leaving.
  const shards = scope.shards ?? trackShards(shardsOf(env, config.shards), env, config.shards).shards;
  const db = shards.home;
  const outbound: typeof fetch = env.OUTBOUND
    ? (input, init) => env.OUTBOUND!.fetch(input, init)
    : // Not `fetch` itself: called as `deps.outbound(…)` it would run with `deps` as `this`, which workerd refuses
      // ("Illegal invocation"). Tests bind OUTBOUND, so only `wrangler dev` and production take this branch.
      (input, init) => fetch(input, init);
  const background = scope.background;
  const audit = auditRecorder({
    shards,
    encryptionKey: config.secrets.encryptionKey,
    now: Date.now,
    background,
    origin: scope.origin ?? NO_ORIGIN,
    actor: scope.actor ?? { kind: "system" },
    // With an export set up, each event also goes to the outbox for it (src/audit-export/).
    exported: config.auditExport.otlp !== null,
  });
  // Built when a flow first sends: most requests send nothing, and a transport is not free to make (an SMTP
  // client's settings, a hook's signer).
  let mailer: Deps["mailer"] | undefined;
  let sms: Deps["sms"] | undefined;
  return {
    config,
    db,
    shards,
    env,
    // The app's SEND_EMAIL and SEND_SMS hooks call out and write their calls to the audit log.
    get mailer() {
      mailer ??= createMailer(config, env, db, { outbound, audit });
      return mailer;
    },
    get sms() {
      sms ??= createSmsSender(config, db, outbound, audit);
      return sms;
    },
    now: Date.now,
    outbound,
    background,
    audit,
    visitor: scope.visitor ?? visitorOf(new Headers()),
    requestId: scope.requestId ?? "-",
  };
}
