import { gte, isNotNull, isNull, lt, or, type SQL, sql } from "drizzle-orm";
import { z } from "zod";
import { contains } from "../db/contains";
import { userProviders, users } from "../db/schema";
import { USER_SORTS } from "./user-order";

export { USER_SORTS };

/**
 * The console's user filters and orders (the admin API's list keeps its search and cursor). Every filter is a SQL
 * condition on `users`, so a filtered list, its paging and its CSV export read the same rows in every shard (the
 * orders are in user-order.ts).
 */
export const USER_STATUSES = ["active", "disabled", "verified", "unverified", "anonymous"] as const;

const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .optional()
  .or(z.literal("").transform(() => undefined));

export const userFiltersSchema = z.object({
  search: z.string().max(254).optional(),
  status: z
    .enum(USER_STATUSES)
    .optional()
    .or(z.literal("").transform(() => undefined)),
  provider: z.string().max(40).optional(),
  role: z.string().max(100).optional(),
  mfa: z
    .enum(["on", "off"])
    .optional()
    .or(z.literal("").transform(() => undefined)),
  /** Created on or after this UTC day, before the day after `createdTo`. */
  createdFrom: day,
  createdTo: day,
  sort: z
    .enum(USER_SORTS)
    .default("newest")
    .or(z.literal("").transform(() => "newest" as const)),
});

export type UserFilters = z.infer<typeof userFiltersSchema>;

const DAY_MS = 86_400_000;

export function userConditions(filters: UserFilters): (SQL | undefined)[] {
  const conditions: (SQL | undefined)[] = [];
  const search = filters.search?.trim();
  if (search) {
    conditions.push(
      or(
        sql`${users.id} = ${search}`,
        contains(users.email, search),
        contains(users.phoneNumber, search),
        contains(users.displayName, search),
      ),
    );
  }
  switch (filters.status) {
    case "active":
      conditions.push(sql`${users.disabled} = 0`);
      break;
    case "disabled":
      conditions.push(sql`${users.disabled} = 1`);
      break;
    case "verified":
      conditions.push(sql`${users.emailVerified} = 1`);
      break;
    case "unverified":
      conditions.push(sql`${users.emailVerified} = 0 and ${users.isAnonymous} = 0`);
      break;
    case "anonymous":
      conditions.push(sql`${users.isAnonymous} = 1`);
      break;
  }
  if (filters.provider) {
    conditions.push(
      sql`exists (select 1 from ${userProviders} where ${userProviders.userId} = ${users.id} and ${userProviders.provider} = ${filters.provider})`,
    );
  }
  if (filters.role) {
    conditions.push(sql`exists (select 1 from json_each(${users.roles}) where value = ${filters.role})`);
  }
  if (filters.mfa === "on") conditions.push(isNotNull(users.activeMfaType));
  if (filters.mfa === "off") conditions.push(isNull(users.activeMfaType));
  if (filters.createdFrom)
    conditions.push(gte(users.createdAt, Date.parse(`${filters.createdFrom}T00:00:00Z`)));
  if (filters.createdTo)
    conditions.push(lt(users.createdAt, Date.parse(`${filters.createdTo}T00:00:00Z`) + DAY_MS));
  return conditions;
}

/** At most this many rows are exported in one CSV. */
export const MAX_USER_ROWS = 10_000;
