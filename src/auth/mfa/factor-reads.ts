import { type Column, eq, inArray, sql } from "drizzle-orm";
import { QueryBuilder } from "drizzle-orm/sqlite-core";
import type { Db } from "../../db/client";
import { compileRead } from "../../db/compiled-read";
import { mfaFactors, users } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { findUserById } from "../users";
import { type Factor, factorsOf, toFactor } from "./factors";

/**
 * A user's factor list as one read that a caller can batch with its others (a D1 batch is one round trip): the factor
 * rows joined to what the list needs of the user's row. Whether a TOTP row still holds the user's current secret is
 * compared in SQL, so the secret never leaves the database on these reads. The same read brings the user's
 * `app_metadata`, which the Supabase face's user object carries beside its factors.
 */

/** What `factorFacts` reads: one row per factor, or one row of nulls for a user without any; none for no user. */
export interface FactorFactsRow {
  userId: string;
  appMetadata: Record<string, unknown> | null;
  activeMfaType: string | null;
  totpEnabledAt: number | null;
  hasTotpSecret: boolean;
  id: string | null;
  factorType: string | null;
  friendlyName: string | null;
  status: string | null;
  phone: string | null;
  createdAt: number | null;
  updatedAt: number | null;
  /** A TOTP row whose secret is the user's current one (any other kind of row: true). */
  current: boolean;
}

/** Decoded as a boolean (SQLite answers 0 or 1). */
const asBoolean = { mapFromDriverValue: (value: unknown) => Boolean(value) } as unknown as Column;

const FACT_COLUMNS = {
  // Named apart: D1 answers a batch's rows by column name, and both tables have an `id`.
  userId: sql<string>`${users.id}`.as("factor_facts_user_id"),
  appMetadata: users.appMetadata,
  activeMfaType: users.activeMfaType,
  totpEnabledAt: users.totpEnabledAt,
  hasTotpSecret: sql<boolean>`${users.totpSecret} IS NOT NULL`.mapWith(Boolean).as("factor_facts_has_totp"),
  id: mfaFactors.id,
  factorType: mfaFactors.factorType,
  friendlyName: mfaFactors.friendlyName,
  status: mfaFactors.status,
  phone: mfaFactors.phone,
  createdAt: mfaFactors.createdAt,
  updatedAt: mfaFactors.updatedAt,
  current: sql<boolean>`${mfaFactors.factorType} <> 'totp' OR ${mfaFactors.secret} IS ${users.totpSecret}`
    .mapWith(Boolean)
    .as("factor_facts_current"),
};

/** The factor facts of `userIds` (all in the shard `db`), unexecuted: `.all()` it, or put it in a `db.batch`. */
export function factorFacts(db: Db, userIds: readonly string[]) {
  return db
    .select(FACT_COLUMNS)
    .from(users)
    .leftJoin(mfaFactors, eq(mfaFactors.userId, users.id))
    .where(userIds.length === 1 ? eq(users.id, userIds[0]!) : inArray(users.id, [...userIds]));
}

/** The same read for one user, its SQL built once (src/db/compiled-read.ts): a hot request's batch. */
export const factorFactsOfUser = compileRead<{ userId: string }, FactorFactsRow>(
  new QueryBuilder()
    .select(FACT_COLUMNS)
    .from(users)
    .leftJoin(mfaFactors, eq(mfaFactors.userId, users.id))
    .where(eq(users.id, sql.placeholder("userId"))),
  {
    userId: users.id,
    appMetadata: users.appMetadata,
    activeMfaType: users.activeMfaType,
    totpEnabledAt: users.totpEnabledAt,
    hasTotpSecret: asBoolean,
    id: mfaFactors.id,
    factorType: mfaFactors.factorType,
    friendlyName: mfaFactors.friendlyName,
    status: mfaFactors.status,
    phone: mfaFactors.phone,
    createdAt: mfaFactors.createdAt,
    updatedAt: mfaFactors.updatedAt,
    current: asBoolean,
  },
);

/**
 * The user's factors from their `factorFacts` rows, oldest first. When the rows need the repair `factorsOf` makes (a
 * TOTP secret with no row named for it, a row whose secret was replaced), that runs instead: rare, and a write.
 */
export async function factorsFromFacts(
  deps: Deps,
  userId: string,
  rows: readonly FactorFactsRow[],
): Promise<Factor[]> {
  const mine = rows.filter((row) => row.userId === userId);
  const user = mine[0];
  if (!user) return [];
  const listed = mine.filter((row) => row.id !== null);
  const needsRepair =
    listed.some((row) => !row.current) ||
    (user.hasTotpSecret && !listed.some((row) => row.factorType === "totp"));
  if (needsRepair) {
    const full = await findUserById(deps.shards, userId);
    return full ? factorsOf(deps, full) : [];
  }
  return listed
    .map((row) =>
      toFactor(
        {
          id: row.id!,
          factorType: row.factorType!,
          friendlyName: row.friendlyName,
          status: row.status!,
          phone: row.phone,
          createdAt: row.createdAt!,
          updatedAt: row.updatedAt!,
        },
        user,
      ),
    )
    .sort((a, b) => a.createdAt - b.createdAt);
}
