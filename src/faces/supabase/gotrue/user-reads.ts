import {
  type Factor,
  factorFacts,
  factorFactsOfUser,
  factorsFromFacts,
  type ReadsAlongside,
  type WireUser,
} from "../../../auth";
import type { Db } from "../../../db/client";
import type { D1Reader } from "../../../db/replica";
import type { Deps } from "../../../http/deps";
import { identitiesOfUser, identitiesRead, type LinkedIdentity } from "../../../providers";
import { type GoTrueUser, goTrueUser } from "./wire";

/**
 * What GoTrue's user object carries beyond the user's row: the linked identities, the factors and `app_metadata`.
 * Every answer that holds a user (getUser, the grants, the admin namespace) reads them here, so they agree; the reads
 * of a shard go as one D1 batch (one round trip), whatever the number of users.
 */

/** GoTrue's factor object (contract supabase.md §2, "Factors"), shaped from the core's. */
export interface GoTrueFactor {
  id: string;
  friendly_name: string;
  factor_type: Factor["type"];
  status: Factor["status"];
  phone?: string;
  created_at: string;
  updated_at: string;
}

export function goTrueFactor(factor: Factor): GoTrueFactor {
  return {
    id: factor.id,
    friendly_name: factor.friendlyName ?? "",
    factor_type: factor.type,
    status: factor.status,
    // GoTrue keeps numbers without their `+`, as in its user object (wire.ts).
    ...(factor.phone ? { phone: factor.phone.replace(/^\+/, "") } : {}),
    created_at: new Date(factor.createdAt).toISOString(),
    updated_at: new Date(factor.updatedAt).toISOString(),
  };
}

export interface UserExtras {
  identities: LinkedIdentity[];
  factors: Factor[];
  appMetadata: Record<string, unknown> | null;
}

/** D1 binds at most 100 values a statement. */
const IDS_PER_READ = 90;

type IdentityRow = LinkedIdentity & { userId: string };
type FactsRow = Awaited<ReturnType<ReturnType<typeof factorFacts>["all"]>>[number];

/** The reads of `userIds` (all in the shard `db`), to put in a `db.batch`: identities and factor facts per chunk. */
function extrasReads(db: Db, userIds: readonly string[]) {
  const reads = [];
  for (let at = 0; at < userIds.length; at += IDS_PER_READ) {
    const chunk = userIds.slice(at, at + IDS_PER_READ);
    reads.push(identitiesRead(db, chunk), factorFacts(db, chunk));
  }
  return reads;
}

/** The extras of each of `userIds` that exists, from the results of `extrasReads` in their order. */
export async function extrasFrom(
  deps: Deps,
  userIds: readonly string[],
  results: readonly unknown[],
): Promise<Map<string, UserExtras>> {
  const identities = results.filter((_, index) => index % 2 === 0).flat() as IdentityRow[];
  const facts = results.filter((_, index) => index % 2 === 1).flat() as FactsRow[];
  const extras = new Map<string, UserExtras>();
  for (const id of userIds) {
    const row = facts.find((fact) => fact.userId === id);
    if (!row) continue;
    extras.set(id, {
      identities: identities.filter((identity) => identity.userId === id),
      factors: await factorsFromFacts(deps, id, facts),
      appMetadata: row.appMetadata,
    });
  }
  return extras;
}

/** One user's extras from rows read elsewhere (user-of-session.ts reads them in the session check's row). */
export async function userExtrasFrom(
  deps: Deps,
  userId: string,
  identities: readonly IdentityRow[],
  facts: readonly FactsRow[],
): Promise<UserExtras | undefined> {
  return (await extrasFrom(deps, [userId], [identities, facts])).get(userId);
}

/**
 * A sign-in's reads of its user, to run in the batch that writes the session (the core's `ReadsAlongside`): the
 * grant's answer carries the user whole and the sign-in pays no D1 round trip more than the Nhost face's (issue 43).
 */
export const signInExtras = (): ReadsAlongside => ({ reads: (db, userId) => extrasReads(db, [userId]) });

/** The extras `signInExtras` read, once the sign-in wrote its session; undefined: not read (read them then). */
export async function extrasOfSignIn(
  deps: Deps,
  userId: string,
  alongside: ReadsAlongside,
): Promise<UserExtras | undefined> {
  return alongside.results && (await extrasFrom(deps, [userId], alongside.results)).get(userId);
}

/** One user's reads as bound statements whose SQL was built once, for a `D1Database.batch` on a hot path. */
export function extrasStatements(d1: D1Reader, userId: string): D1PreparedStatement[] {
  return [identitiesOfUser.statement(d1, { userId }), factorFactsOfUser.statement(d1, { userId })];
}

/** The extras of `userId` from the results of `extrasStatements(OfSession)`; undefined: no such user. */
export async function extrasOfResults(
  deps: Deps,
  userId: string,
  [identities, facts]: readonly D1Result[],
): Promise<UserExtras | undefined> {
  const rows = [identitiesOfUser.rowsOf(identities!), factorFactsOfUser.rowsOf(facts!)];
  return (await extrasFrom(deps, [userId], rows)).get(userId);
}

/** The extras of each of `userIds` that exists: one D1 batch per shard. */
export async function extrasOf(deps: Deps, userIds: readonly string[]): Promise<Map<string, UserExtras>> {
  const [only, ...others] = userIds;
  if (only && !others.length) {
    const d1 = deps.shards.d1OfUser(only);
    const extras = await extrasOfResults(deps, only, await d1.batch(extrasStatements(d1, only)));
    return new Map(extras ? [[only, extras]] : []);
  }
  const byShard = new Map<number, string[]>();
  for (const id of new Set(userIds)) {
    const index = deps.shards.indexOfUser(id);
    byShard.set(index, [...(byShard.get(index) ?? []), id]);
  }
  const maps = await Promise.all(
    [...byShard.values()].map(async (ids) => {
      const db = deps.shards.ofUser(ids[0]!);
      const [first, ...rest] = extrasReads(db, ids);
      return extrasFrom(deps, ids, await db.batch([first!, ...rest]));
    }),
  );
  return new Map(maps.flatMap((map) => [...map]));
}

/** GoTrue's user object, whole: identities, `app_metadata`, and `factors` when the user has any (its `omitempty`). */
export function wholeGoTrueUser(
  user: WireUser,
  extras: UserExtras | undefined,
  signedInAt?: string,
): GoTrueUser & { factors?: GoTrueFactor[] } {
  return {
    ...goTrueUser(user, { signedInAt, identities: extras?.identities, appMetadata: extras?.appMetadata }),
    ...(extras?.factors.length ? { factors: extras.factors.map(goTrueFactor) } : {}),
  };
}
