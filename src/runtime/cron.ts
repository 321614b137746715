import type { Config } from "../config";
import { sweepPlumbing } from "../db/housekeeping";
import { type Shards, shardsOf } from "../db/shards";
import { loadSlotMap } from "../db/slot-map";
import type { Env } from "../env";
import { drainShards } from "../events/outbox";
import { getConfig } from "./config";
import { FEATURES } from "./features";
import { createServices, detached } from "./services";

/** wrangler.toml's daily cron; the other one runs every minute. */
const HOUSEKEEPING_CRON = "17 3 * * *";

/**
 * The shards of the configuration; a configuration that does not parse still has its home database drained, as
 * before there were shards: events are never held back by a typo.
 */
function shardsToDrain(env: Env): Shards {
  try {
    return shardsOf(env, getConfig(env).shards);
  } catch (error) {
    console.error(JSON.stringify({ level: "error", what: "outbox drain", detail: String(error) }));
    return shardsOf(env, ["DB"]);
  }
}

/**
 * Daily: removes what has expired, so tables hold only live rows (docs/storage-schema.md): the plumbing's own
 * tables, then each feature's housekeeping in the list's order. With several shards (src/db/shards.ts) the
 * user-keyed tables are swept in every shard, the global ones in the home database.
 */
export async function runHousekeeping(
  env: Env,
  config: Config,
  now = Date.now(),
  background: (work: Promise<unknown>) => void = detached,
): Promise<void> {
  await loadSlotMap(env, config.shards);
  const services = createServices(config, env, { background });
  await sweepPlumbing(services.shards, config, now);
  for (const feature of FEATURES) await feature.housekeeping?.(services, now);
}

/** The features' every-minute work (a timed ban's end); a configuration that does not parse runs none of it. */
export async function runEveryMinute(
  env: Env,
  now = Date.now(),
  background: (work: Promise<unknown>) => void = detached,
): Promise<void> {
  const config = getConfig(env);
  await loadSlotMap(env, config.shards);
  const services = createServices(config, env, { background });
  for (const feature of FEATURES) await feature.everyMinute?.(services, now);
}

/** The Worker's `scheduled` handler. */
export async function runScheduled(
  controller: ScheduledController,
  env: Env,
  ctx: ExecutionContext,
): Promise<void> {
  // Every minute: events whose request could not hand them to the queue (src/events/outbox.ts), from every shard's
  // outbox (each shard's triggers write their own).
  ctx.waitUntil(drainShards(shardsToDrain(env), env.EVENTS, Date.now));
  ctx.waitUntil(runEveryMinute(env, Date.now(), (work) => ctx.waitUntil(work)));
  if (controller.cron === HOUSEKEEPING_CRON) {
    ctx.waitUntil(runHousekeeping(env, getConfig(env), Date.now(), (work) => ctx.waitUntil(work)));
  }
}
