import { createMiddleware } from "hono/factory";
import type { Actor } from "../audit/actor";
import type { RequestOrigin } from "../audit/events";
import type { Config } from "../config";
import { type Shards, shardsOf, trackShards } from "../db/shards";
import { loadSlotMap } from "../db/slot-map";
import type { Env } from "../env";
import { drainOutbox, mayHaveWritten } from "../events/outbox";
import { editAnswer, requestIdOf } from "./answer-headers";
import type { AppEnv } from "./app-env";
import type { Deps } from "./deps";
import { type Visitor, visitorOf } from "./visitor";

/** The one factory of the services (src/runtime/services.ts), given what this request adds to them. */
export type ServicesOf = (
  config: Config,
  env: Env,
  scope: {
    background: (work: Promise<unknown>) => void;
    shards: Shards;
    origin: RequestOrigin;
    visitor: Visitor;
    actor: Actor;
    requestId: string;
  },
) => Deps;

/** Puts the request id, the parsed config and the service dependencies on the context. */
export function requestContext(config: Config, services: ServicesOf) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const requestId = requestIdOf(c.req.raw.headers);
    // Set first: a fault below is answered by the app's error handler, which reads them.
    c.set("requestId", requestId);
    c.set("config", config);
    // The shards this request reaches for a user are remembered: their outboxes are drained after the answer.
    // With several shards, routing follows the slot map (read at most once a second per isolate); a slot being moved
    // is reached through queries that wait for its switch (src/db/slot-wait.ts).
    const every = shardsOf(c.env, config.shards, await loadSlotMap(c.env, config.shards));
    const { shards, touched } = trackShards(every, c.env, config.shards);
    const background = (work: Promise<unknown>, what = "background") =>
      c.executionCtx.waitUntil(work.catch((e) => logError(requestId, what, e)));
    c.set("auth", null);
    c.set(
      "deps",
      services(config, c.env, {
        shards,
        background,
        origin: {
          ip: c.req.header("cf-connecting-ip") ?? null,
          userAgent: c.req.header("user-agent") ?? null,
        },
        visitor: visitorOf(c.req.raw.headers, () => c.req.raw.cf),
        // Until the request authenticates as someone else (the admin secret, a SCIM token, an access token…).
        actor: { kind: "user" },
        requestId,
      }),
    );
    await next();
    // A route that must answer with its caller's own identifier (AuthZEN's `X-Request-ID`) has set it already.
    editAnswer(c, (headers) => {
      if (!headers.has("X-Request-Id")) headers.set("X-Request-Id", requestId);
    });
    // The events this request's changes wrote go to the queue after the answer (src/events/outbox.ts).
    if (c.env.EVENTS && mayHaveWritten(c.req.method, c.req.path, c.req.query("grant_type"))) {
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
