import { createMiddleware } from "hono/factory";
import { auditRecorder } from "../audit/record";
import type { Config } from "../config";
import { shardsOf, trackShards } from "../db/shards";
import { drainOutbox, mayHaveWritten } from "../events/outbox";
import { createMailer } from "../mail/create-mailer";
import { createSmsSender } from "../sms/create-sender";
import type { AppEnv } from "./app-env";
import { visitorOf } from "./visitor";

/** Puts the request id, the parsed config and the service dependencies on the context. */
export function requestContext(config: Config) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const requestId = c.req.header("cf-ray") ?? crypto.randomUUID();
    // The shards this request reaches for a user are remembered: their outboxes are drained after the answer.
    const every = shardsOf(c.env, config.AUTH_D1_SHARDS);
    const { shards, touched } = trackShards(every);
    const db = shards.home;
    const outbound: typeof fetch = c.env.OUTBOUND
      ? (input, init) => c.env.OUTBOUND!.fetch(input, init)
      : // Not `fetch` itself: called as `deps.outbound(…)` it would run with `deps` as `this`, which workerd refuses
        // ("Illegal invocation"). Tests bind OUTBOUND, so only `wrangler dev` and production take this branch.
        (input, init) => fetch(input, init);
    const background = (work: Promise<unknown>) =>
      c.executionCtx.waitUntil(work.catch((e) => logError(requestId, "background", e)));
    const audit = auditRecorder({
      shards,
      encryptionKey: config.AUTH_ENCRYPTION_KEY!,
      now: Date.now,
      background,
      origin: {
        ip: c.req.header("cf-connecting-ip") ?? null,
        userAgent: c.req.header("user-agent") ?? null,
      },
    });
    c.set("requestId", requestId);
    c.set("config", config);
    c.set("auth", null);
    c.set("deps", {
      config,
      db,
      shards,
      env: c.env,
      // The app's SEND_EMAIL and SEND_SMS hooks call out and write their calls to the audit log.
      mailer: createMailer(config, c.env, db, { outbound, audit }),
      sms: createSmsSender(config, db, outbound, audit),
      now: Date.now,
      outbound,
      background,
      audit,
      path: c.req.path,
      visitor: visitorOf(c.req.raw.headers, c.req.raw.cf),
    });
    await next();
    c.header("X-Request-Id", requestId);
    // The events this request's changes wrote go to the queue after the answer (src/events/outbox.ts).
    if (c.env.EVENTS && mayHaveWritten(c.req.method, c.req.path)) {
      for (const index of touched()) {
        background(drainOutbox({ db: every.all[index]!, queue: c.env.EVENTS, now: Date.now }));
      }
    }
  });
}

export function logError(
  requestId: string,
  what: string,
  error: unknown,
  level: "error" | "warn" = "error",
): void {
  // An AppError's `reason` is the precise cause (a mail transport's answer) that its client-facing message hides.
  const reason = error instanceof Error && "reason" in error ? { reason: error.reason } : {};
  const detail =
    error instanceof Error
      ? { name: error.name, message: error.message, ...reason, stack: error.stack }
      : error;
  const line = JSON.stringify({ level, requestId, what, detail });
  if (level === "warn") console.warn(line);
  else console.error(line);
}
