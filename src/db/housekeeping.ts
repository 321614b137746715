import { lte } from "drizzle-orm";
import type { Config } from "../config";
import { auditEvents, devMailbox, devSms } from "./schema";
import { eachShard, type Shards } from "./shards";

const DAY_MS = 24 * 3600 * 1000;
const DEV_RETENTION_MS = 7 * DAY_MS;

/**
 * The daily sweep of the plumbing's own tables (docs/storage-schema.md): the development mailbox and SMS (home
 * database) and, in every shard, audit events past their retention. Each feature sweeps its own (its `housekeeping`,
 * src/runtime/cron.ts runs them all).
 */
export async function sweepPlumbing(
  shards: Shards,
  config: Pick<Config, "audit">,
  now: number,
): Promise<void> {
  const home = shards.home;
  await home.batch([
    home.delete(devMailbox).where(lte(devMailbox.createdAt, now - DEV_RETENTION_MS)),
    home.delete(devSms).where(lte(devSms.createdAt, now - DEV_RETENTION_MS)),
  ]);
  await eachShard(shards, (db) =>
    db
      .delete(auditEvents)
      .where(lte(auditEvents.at, now - config.audit.retentionDays * DAY_MS))
      .run(),
  );
}
