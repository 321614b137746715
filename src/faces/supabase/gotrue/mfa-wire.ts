import { type Factor, FactorError, type Session } from "../../../auth";
import type { Deps } from "../../../http/deps";
import { GoTrueError } from "./errors";
import { extrasOf, type UserExtras, wholeGoTrueUser } from "./user-reads";
import { type GoTrueSession, goTrueSession } from "./wire";

/** GoTrue's factor refusals and its grants' sessions (contract supabase.md §2, "Factors"), shaped from the core's. */

// Shaped in user-reads.ts, with the rest of the user object; here for the routes of the mfa namespace.
export { type GoTrueFactor, goTrueFactor } from "./user-reads";

/**
 * A session with its user whole (identities, `app_metadata`, `factors`), as GoTrue answers every grant: auth-js's
 * `getAuthenticatorAssuranceLevel()` reads the factors from the stored session to tell an app that an `aal1`
 * session should step up. One D1 batch (user-reads.ts).
 */
export async function sessionWithFactors(
  deps: Deps,
  session: Session,
  /** Already read (in the refresh's or the sign-in's own batch: user-reads.ts); else read here. */
  known?: UserExtras,
): Promise<GoTrueSession> {
  const now = deps.now();
  const shaped = goTrueSession(session, now);
  const extras = known ?? (await extrasOf(deps, [session.user.id])).get(session.user.id);
  return { ...shaped, user: wholeGoTrueUser(session.user, extras, shaped.user.last_sign_in_at) };
}

/** The core's refusal of a factor, in GoTrue's words (internal/api/mfa.go); anything else goes on. */
export function factorRefusal(error: unknown, factor?: Factor, challengeId?: string): never {
  if (!(error instanceof FactorError)) throw error;
  switch (error.reason) {
    case "name-conflict":
      throw new GoTrueError(
        422,
        "mfa_factor_name_conflict",
        "A factor with the friendly name for this user already exists",
      );
    case "too-many":
      throw new GoTrueError(
        422,
        "too_many_enrolled_mfa_factors",
        "Maximum number of verified factors reached, unenroll to continue",
      );
    case "verified-exists":
      throw new GoTrueError(
        422,
        "mfa_verified_factor_exists",
        "A verified phone factor already exists, unenroll the existing factor to continue",
      );
    case "invalid-phone":
      throw new GoTrueError(400, "validation_failed", "Invalid phone number format (E.164 required)");
    case "challenge-not-found":
      throw new GoTrueError(
        422,
        "mfa_factor_not_found",
        "MFA factor with the provided challenge ID not found",
      );
    case "challenge-expired":
      throw new GoTrueError(
        422,
        "mfa_challenge_expired",
        `MFA challenge ${challengeId} has expired, verify against another challenge or create a new challenge.`,
      );
    case "wrong-code":
      throw new GoTrueError(
        422,
        "mfa_verification_failed",
        factor?.type === "phone" ? "Invalid MFA Phone code entered" : "Invalid TOTP code entered",
      );
  }
}
