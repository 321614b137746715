import type { Audit } from "../audit/events";
import type { Config } from "../config";
import type { Db } from "../db/client";
import type { Shards } from "../db/shards";
import type { Env } from "../env";
import type { Mailer } from "../mail/mailer";
import type { SmsSender } from "../sms/sender";
import type { Visitor } from "./visitor";

/** What a service needs from the outside world; routes build it per request, tests can build their own. */
export interface Deps {
  config: Config;
  /**
   * The home database (`DB`): the global tables (buckets, OAuth2 clients, keys, webhooks, console sessions) and the
   * directory. A user's rows live in `shards.ofUser(id)`, which is this same database when there is one shard.
   */
  db: Db;
  /** Where each user's rows live (src/db/shards.ts). */
  shards: Shards;
  env: Env;
  mailer: Mailer;
  sms: SmsSender;
  /** Milliseconds since the epoch; injected so expiry logic is testable with a fixed clock. */
  now: () => number;
  /**
   * Every call to an outside host (HIBP, later providers and SMS) goes through here: `env.OUTBOUND` when bound
   * (tests bind a local fake Worker), else the platform `fetch`.
   */
  outbound: typeof fetch;
  /**
   * Work that may finish after the answer is sent (`ExecutionContext.waitUntil`). Its failure is logged as `what`
   * (else "background") under the request's id: after the answer, the work itself no longer knows it.
   */
  background: (work: Promise<unknown>, what?: string) => void;
  /** Records a security event of this request (contract §10 audit), after the answer. */
  audit: Audit;
  /** What this request has shown about its sender: its Turnstile token, its address, the checks it passed. */
  visitor: Visitor;
  /**
   * The request's id (`X-Request-Id`), which a log line of work deep in a flow carries (a fail-open warning): "-"
   * for a job (a queue's batch, the cron), which answers no request.
   */
  requestId: string;
}
