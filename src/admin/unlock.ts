import { type FactorLock, forgetSecondFactorGuesses, lockedFactors, unlockAccount } from "../auth";
import type { Deps } from "../http/deps";
import { requireUser } from "./users";

/**
 * An admin's unlock (contract §13), for the admin API and the console alike: every factor of the user's lockout
 * unlocked and its failures forgotten, and the second factor's wrong guesses with them (its `GuessGuard`), so the
 * user can sign in at once by any method. 404 `not-found` for an unknown user. Answers the factors that were locked.
 */
export async function unlockUser(deps: Deps, userId: string): Promise<{ id: string; factors: string[] }> {
  const user = await requireUser(deps, userId);
  const factors = await unlockAccount(deps, user.id);
  await forgetSecondFactorGuesses(deps, user.id);
  return { id: user.id, factors };
}

/** The user's locked factors, for the console's user page. */
export function locksOf(deps: Deps, userId: string): Promise<FactorLock[]> {
  return lockedFactors(deps, userId);
}
