import { SESSION_LOCATOR_CLAIM } from "../auth";
import type { Deps } from "../http/deps";
import { familyIsLive } from "../token-families";

const LOCATOR = /^[0-9a-f]{6}$/;

/**
 * Whether the session an access token belongs to still stands, at the cost of one Durable Object call and no D1
 * read (contract platform.md §1, docs/workers.md "Costs"). Every way a session ends revokes its token family in its
 * `SessionFamilies` object, the one place that decides its refreshes: sign-out (one session, or everywhere), a
 * replayed refresh token, the user disabled or deleted (src/auth/revocation.ts). The token names that object by its
 * `session_locator` claim and the family by `sid`, so the answer is that object's, at once, wherever it is asked: a
 * revocation is seen by the very next call. A token without them (minted before the claim existed, within one
 * access-token lifetime of the upgrade) cannot be checked so: it is not taken as live.
 */
export function sessionStands(deps: Deps, sessionId: string | undefined, claims: Record<string, unknown>) {
  const locator = claims[SESSION_LOCATOR_CLAIM];
  if (!sessionId || sessionId.length > 100 || typeof locator !== "string" || !LOCATOR.test(locator)) {
    return Promise.resolve(false);
  }
  return familyIsLive(deps, locator, sessionId);
}
