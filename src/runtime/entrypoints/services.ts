import { shardsOf, trackShards } from "../../db/shards";
import { loadSlotMap } from "../../db/slot-map";
import type { Env } from "../../env";
import { drainOutbox } from "../../events/outbox";
import type { Deps } from "../../http/deps";
import { serviceConfig } from "../config";
import { createServices } from "../services";

/**
 * The services one call through the service binding gets (docs/workers.md): the configuration and `Deps` the fetch
 * handler builds, from the same factory (src/runtime/services.ts), with the call's background work kept alive by its
 * `ExecutionContext`. `writes`: the call may write events (an admin's change), so the outboxes of the shards it
 * reached are handed to the queue after it, as after an HTTP request (src/http/context.ts).
 */
export async function withServices<T>(
  env: Env,
  ctx: ExecutionContext,
  work: (deps: Deps) => Promise<T>,
  { writes = false }: { writes?: boolean } = {},
): Promise<T> {
  const config = serviceConfig(env);
  // The slot map (several shards only): a call reaching a slot being moved waits for its switch (slot-wait.ts).
  const every = shardsOf(env, config.shards, await loadSlotMap(env, config.shards));
  const { shards, touched } = trackShards(every, env, config.shards);
  const background = (work: Promise<unknown>, what = "background") =>
    ctx.waitUntil(
      work.catch((error) => console.error(JSON.stringify({ level: "error", what, detail: String(error) }))),
    );
  // A Worker calls: `AuthAdmin` names it (`props.caller`, src/platform/admin.ts) once it has checked the name.
  const deps = createServices(config, env, { shards, background, actor: { kind: "worker" } });
  try {
    return await work(deps);
  } finally {
    if (writes && env.EVENTS) {
      for (const index of touched()) {
        background(drainOutbox({ db: every.all[index]!, queue: env.EVENTS, now: Date.now }));
      }
    }
  }
}
