import { and, count, gt, gte, inArray, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { auditEvents, sessions, users } from "../db/schema";
import { eachShard } from "../db/shards";
import type { Deps } from "../http/deps";

/**
 * The console's overview: the state of the user base and 30 days of activity, from the users table and audit log of
 * every shard.
 */

const DAY_MS = 86_400_000;
export const OVERVIEW_DAYS = 30;

export interface DailySeries {
  /** One value per day, oldest first, `OVERVIEW_DAYS` of them, the last being today (UTC). */
  values: number[];
  total: number;
}

export interface Overview {
  users: { total: number; verified: number; anonymous: number; disabled: number };
  activeSessions: number;
  /** The first day of the series (UTC midnight, ms). */
  since: number;
  newUsers: DailySeries;
  signIns: DailySeries;
  failedSignIns: DailySeries;
  refreshReplays: DailySeries;
}

function series(since: number, rows: { day: number; n: number }[]): DailySeries {
  const values = new Array<number>(OVERVIEW_DAYS).fill(0);
  for (const row of rows) {
    const index = Math.floor((row.day - since) / DAY_MS);
    if (index >= 0 && index < OVERVIEW_DAYS) values[index] = (values[index] ?? 0) + row.n;
  }
  return { values, total: values.reduce((sum, n) => sum + n, 0) };
}

/** Counts per UTC day of `at`-like millisecond columns, grouped in SQL (the rows never leave D1). */
const dayOf = (column: typeof users.createdAt | typeof auditEvents.at) =>
  sql<number>`(${column} / ${DAY_MS}) * ${DAY_MS}`.mapWith(Number);

/** One shard's part of the overview: every shard holds users, their sessions and their audit events. */
async function shardOverview(db: Db, now: number, since: number) {
  const eventDay = dayOf(auditEvents.at);
  const userDay = dayOf(users.createdAt);
  const [totals, active, created, events] = await db.batch([
    db
      .select({
        total: count(),
        verified: sql<number>`coalesce(sum(${users.emailVerified}), 0)`.mapWith(Number),
        anonymous: sql<number>`coalesce(sum(${users.isAnonymous}), 0)`.mapWith(Number),
        disabled: sql<number>`coalesce(sum(${users.disabled}), 0)`.mapWith(Number),
      })
      .from(users),
    db.select({ n: count() }).from(sessions).where(gt(sessions.expiresAt, now)),
    db.select({ day: userDay, n: count() }).from(users).where(gte(users.createdAt, since)).groupBy(userDay),
    db
      .select({ type: auditEvents.type, day: eventDay, n: count() })
      .from(auditEvents)
      .where(
        and(
          gte(auditEvents.at, since),
          inArray(auditEvents.type, ["signin.success", "signin.failure", "refresh.replay"]),
        ),
      )
      .groupBy(auditEvents.type, eventDay),
  ]);
  return { totals: totals[0], active: active[0]?.n ?? 0, created, events };
}

/** The overview of every shard: counts summed, the days' series added up (`series` adds rows of one day). */
export async function overview(deps: Deps): Promise<Overview> {
  const now = deps.now();
  const since = Math.floor(now / DAY_MS) * DAY_MS - (OVERVIEW_DAYS - 1) * DAY_MS;
  const parts = await eachShard(deps.shards, (db) => shardOverview(db, now, since));
  const users = { total: 0, verified: 0, anonymous: 0, disabled: 0 };
  for (const { totals } of parts) {
    users.total += totals?.total ?? 0;
    users.verified += totals?.verified ?? 0;
    users.anonymous += totals?.anonymous ?? 0;
    users.disabled += totals?.disabled ?? 0;
  }
  const events = parts.flatMap((part) => part.events);
  const ofType = (type: string) => events.filter((row) => row.type === type);
  return {
    users,
    activeSessions: parts.reduce((sum, part) => sum + part.active, 0),
    since,
    newUsers: series(
      since,
      parts.flatMap((part) => part.created),
    ),
    signIns: series(since, ofType("signin.success")),
    failedSignIns: series(since, ofType("signin.failure")),
    refreshReplays: series(since, ofType("refresh.replay")),
  };
}
