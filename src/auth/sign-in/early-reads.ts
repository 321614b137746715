import type { Db } from "../../db/client";
import { isBookmark, sessionDrizzle } from "../../db/replica";
import { secondFactorRowsOf } from "../second-step";
import type { ReadAt } from "../users";
import { sessionGateReads } from "./hooks";
import type { SignInScope } from "./scope";

/**
 * Reads of the signing-in user's rows started as soon as the account is known, beside the lockout's count, instead of
 * after the first factor (issue 48, "Round trips": one wave where there were two). Each is started once per sign-in
 * and taken, by the same key, by the step that needs it once the first factor proved right: the second step's factors
 * (./pipeline.ts) and what the gates read (`SignInHooks.readsBeforeSession`, src/risk/).
 *
 * Why this is safe: they are reads of the account's own rows, started only after the checks before the first factor
 * passed and the route's rate limit counted (a refused attempt has read nothing more), and their answers are used
 * only after the first factor proved right: a wrong password is answered without waiting for them (no timing
 * difference between a known account and an unknown one: the account's reads were never awaited before the verdict).
 * Nothing is written or counted early: the gates' counters (the risk velocity's) still count after the first factor.
 *
 * Where they read (`earlyReader`): the primary, unless the flow read the account's row through a session and passed
 * its bookmark (one database, a password sign-in by email: users.ts `readAt`). Then a session from that bookmark, which
 * a replica at least as fresh as the row's read may serve (src/db/replica.ts): what a factor or a device committed
 * before the row was read is seen, as it would be had it been read with the row. Without a bookmark, or for another
 * database, the primary as before: never an unconstrained replica.
 */

const started = new WeakMap<SignInScope, Map<string, Promise<unknown>>>();

/** `read`'s answer, started at the first call for `key` in this sign-in; a failure surfaces where it is awaited. */
export function readEarly<T>(scope: SignInScope, key: string, read: () => Promise<T>): Promise<T> {
  let reads = started.get(scope);
  if (!reads) {
    reads = new Map();
    started.set(scope, reads);
  }
  const known = reads.get(key) as Promise<T> | undefined;
  if (known) return known;
  let promise: Promise<T>;
  try {
    promise = read();
  } catch (error) {
    promise = Promise.reject(error);
  }
  // Awaited by the step that needs it, or never (a wrong first factor): until then no unhandled rejection.
  promise.catch(() => {});
  reads.set(key, promise);
  return promise;
}

const takeBacks = new WeakMap<SignInScope, (() => Promise<void>)[]>();

/**
 * A gate's count started with the early reads (the risk velocity's: a write, unlike them), taken by `key` as a read
 * is. Counted as if the first factor will prove right, and taken back after the answer when it did not
 * (`settleFirstFactor`), as the lockout counts a failure first and forgives a right credential: the count is never
 * below what it counts, only above it by the wrong guesses in flight. Started only after the limits counted.
 */
export function countEarly<T>(
  scope: SignInScope,
  key: string,
  count: () => { answer: Promise<T>; takeBack(): Promise<void> },
): Promise<T> {
  return readEarly(scope, key, () => {
    const started = count();
    takeBacks.set(scope, [...(takeBacks.get(scope) ?? []), started.takeBack]);
    return started.answer;
  });
}

/**
 * The first factor's verdict, for the counts started before it: a wrong (or unchecked: a check that failed, a
 * rejected verdict) one takes them back after the answer, best effort (a count left one higher only raises a risk
 * level for a while). Once per sign-in.
 */
export function settleFirstFactor(scope: SignInScope, verdict: Promise<boolean>): void {
  scope.deps.background(
    verdict
      .catch(() => false)
      .then(async (right) => {
        const pending = takeBacks.get(scope) ?? [];
        takeBacks.delete(scope);
        if (right) return;
        await Promise.all(
          pending.map((takeBack) =>
            takeBack().catch((error: unknown) =>
              console.warn(
                JSON.stringify({ level: "warn", what: "early count not taken back", detail: String(error) }),
              ),
            ),
          ),
        );
      }),
  );
}

/** The key of the second step's factor rows of `userId` (./pipeline.ts takes them by it). */
export const secondFactorsKey = (userId: string) => `second-factors:${userId}`;

const rowsReadAt = new WeakMap<SignInScope, { userId: string; at: ReadAt & { bookmark: string } }>();

/** What an early read needs of a database: Drizzle's query builder (no relational queries, which need the schema). */
export type EarlyReader = Pick<Db, "select">;

/** Where an early read of `userId`'s rows goes: a session from the row's bookmark when there is one, else the primary. */
export function earlyReader(scope: SignInScope, userId: string): EarlyReader {
  const shard = scope.deps.shards.ofUser(userId);
  const read = rowsReadAt.get(scope);
  if (!read || read.userId !== userId || read.at.d1 !== scope.deps.shards.d1OfUser(userId)) return shard;
  return sessionDrizzle(read.at.d1.withSession(read.at.bookmark));
}

/**
 * Starts what the session of `userId` will need after the first factor: its second factors, the gates' reads and
 * counts. Called by a first-factor flow once the account is known, the checks before the first factor passed and the
 * limits counted; the flow then calls `settleFirstFactor` with the verdict. `readAt`: where the flow read the account's
 * row, when it can say (see `earlyReader`).
 */
export function readBeforeFirstFactor(scope: SignInScope, userId: string, readAt?: ReadAt): void {
  if (readAt && isBookmark(readAt.bookmark))
    rowsReadAt.set(scope, { userId, at: { d1: readAt.d1, bookmark: readAt.bookmark } });
  readEarly(scope, secondFactorsKey(userId), () =>
    secondFactorRowsOf(scope.deps, userId, earlyReader(scope, userId)),
  );
  for (const reads of sessionGateReads()) reads(scope, userId);
}
