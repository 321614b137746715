import { and, count, gt, gte, inArray, sql } from "drizzle-orm";
import { auditEvents, sessions, users } from "../db/schema";
import type { Deps } from "../http/deps";

/** The console's overview: the state of the user base and 30 days of activity, from the users table and audit log. */

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

export async function overview(deps: Deps): Promise<Overview> {
  const now = deps.now();
  const since = Math.floor(now / DAY_MS) * DAY_MS - (OVERVIEW_DAYS - 1) * DAY_MS;
  const eventDay = dayOf(auditEvents.at);
  const userDay = dayOf(users.createdAt);
  const [totals, active, created, events] = await deps.db.batch([
    deps.db
      .select({
        total: count(),
        verified: sql<number>`coalesce(sum(${users.emailVerified}), 0)`.mapWith(Number),
        anonymous: sql<number>`coalesce(sum(${users.isAnonymous}), 0)`.mapWith(Number),
        disabled: sql<number>`coalesce(sum(${users.disabled}), 0)`.mapWith(Number),
      })
      .from(users),
    deps.db.select({ n: count() }).from(sessions).where(gt(sessions.expiresAt, now)),
    deps.db
      .select({ day: userDay, n: count() })
      .from(users)
      .where(gte(users.createdAt, since))
      .groupBy(userDay),
    deps.db
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
  const ofType = (type: string) => events.filter((row) => row.type === type);
  const row = totals[0] ?? { total: 0, verified: 0, anonymous: 0, disabled: 0 };
  return {
    users: { total: row.total, verified: row.verified, anonymous: row.anonymous, disabled: row.disabled },
    activeSessions: active[0]?.n ?? 0,
    since,
    newUsers: series(since, created),
    signIns: series(since, ofType("signin.success")),
    failedSignIns: series(since, ofType("signin.failure")),
    refreshReplays: series(since, ofType("refresh.replay")),
  };
}
