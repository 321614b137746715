import { secondFactorRowsOf } from "../second-step";
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
  const promise = Promise.resolve().then(read);
  // Awaited by the step that needs it, or never (a wrong first factor): until then no unhandled rejection.
  promise.catch(() => {});
  reads.set(key, promise);
  return promise;
}

/** The key of the second step's factor rows of `userId` (./pipeline.ts takes them by it). */
export const secondFactorsKey = (userId: string) => `second-factors:${userId}`;

/**
 * Starts the reads the session of `userId` will need after the first factor: its second factors and the gates'.
 * Called by a first-factor flow once the account is known and the checks before the first factor passed.
 */
export function readBeforeFirstFactor(scope: SignInScope, userId: string): void {
  readEarly(scope, secondFactorsKey(userId), () => secondFactorRowsOf(scope.deps, userId));
  for (const reads of sessionGateReads()) reads(scope, userId);
}
